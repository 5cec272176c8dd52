import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

/**
 * What an attacker learned or got before being refused: another trial's skills and project ids from the skill
 * list, and a 200 event stream (then an error event) for a chat they had no right to, or for someone else's
 * conversation. Refusals come first, as plain 4xx JSON, and the list shows only what the asker may know.
 */
const skill = (id: string, projects?: string[]) => `
id: ${id}
name: Skill ${id}
${projects ? `projects: [${projects.join(', ')}]` : ''}
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - { id: age-present, field: age, logic: { "!!": [{ var: age }] }, message: "Age is missing" }
    on_pass: end_ok
    on_fail: end_found
`;

describe.each(testEngines())('access checked before any work is shown or started on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let model: ScriptedModel;
  const skillsDir = mkdtempSync(path.join(tmpdir(), `clinagent-skill-list-${engine}-`));
  const auth: Record<'admin' | 'piA' | 'crcB' | 'crcA', { authorization: string }> = {} as never;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    writeFileSync(path.join(skillsDir, 'secret-oncology.yaml'), skill('secret-oncology-checks', ['onco-secret', 'trial-a']));
    writeFileSync(path.join(skillsDir, 'everyone.yaml'), skill('shared-checks'));
    writeFileSync(path.join(skillsDir, 'onco-only.yaml'), skill('onco-only-checks', ['onco-secret']));
    model = await startScriptedModel();
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL, env: { SKILLS_DIR: skillsDir } });
    app = await buildServer(ctx, { serveConsole: false });
    for (const id of ['onco-secret', 'trial-a', 'trial-b']) await ctx.users.createProject({ id, name: id });
    for (const [name, role, projects] of [['admin', 'admin', []], ['piA', 'pi', ['trial-a']], ['crcA', 'coordinator', ['trial-a']], ['crcB', 'coordinator', ['trial-b']]] as const) {
      const { user, token } = await ctx.users.create({ name, role });
      for (const projectId of projects) await ctx.users.addMember(projectId, user.id);
      auth[name] = { authorization: `Bearer ${token}` };
      ids[name] = user.id;
    }
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
    rmSync(skillsDir, { recursive: true, force: true });
  });

  const skills = async (who: keyof typeof auth) => {
    const response = await app.inject({ method: 'GET', url: '/api/iit/skills', headers: auth[who] });
    expect(response.statusCode).toBe(200);
    return { body: response.body, skills: response.json().skills as Array<{ id: string; projects: string[] | null }> };
  };

  it("lists a user only the skills of every project and of their own, never another trial's names or ids", async () => {
    const outsider = await skills('crcB');
    expect(outsider.skills.map((s) => s.id)).toEqual(['shared-checks']);
    expect(outsider.body).not.toMatch(/onco|secret-oncology/);

    const member = await skills('crcA');
    expect(member.skills.map((s) => [s.id, s.projects]).sort()).toEqual([['secret-oncology-checks', ['trial-a']], ['shared-checks', null]]);
    expect(member.body).not.toContain('onco-secret');

    expect((await skills('admin')).skills.map((s) => s.id).sort()).toEqual(['onco-only-checks', 'secret-oncology-checks', 'shared-checks']);
  });

  it("answers a non-member's chat stream 404 as JSON, before any stream opens, and starts no conversation", async () => {
    for (const url of ['/api/iit/projects/trial-a/chat/stream', '/api/iit/projects/no-such-project/chat/stream']) {
      const response = await app.inject({ method: 'POST', url, headers: { ...auth.crcB, accept: 'text/event-stream' }, payload: { message: 'How many subjects?' } });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    const empty = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/chat/stream', headers: auth.crcA, payload: { message: '   ' } });
    expect(empty.statusCode).toBe(400);
    expect(empty.headers['content-type']).toMatch(/^application\/json/);
    const mine = await app.inject({ method: 'GET', url: '/api/conversations', headers: auth.crcB });
    expect(mine.json().conversations).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });

  it("refuses a stream that would continue someone else's conversation, as JSON before the stream", async () => {
    const theirs = await ctx.conversations.start({ actor: (await ctx.users.get(ids.crcA!))!, projectId: 'trial-a', title: 'private' });
    const assistant = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/chat/stream', headers: auth.piA, payload: { message: 'and P004?', conversationId: theirs.id } });
    expect(assistant.statusCode).toBe(404);
    expect(assistant.headers['content-type']).toMatch(/^application\/json/);

    const agentConversation = await ctx.conversations.start({ actor: (await ctx.users.get(ids.crcA!))!, scenarioId: 'protocol-qa', title: 'private' });
    for (const who of ['piA', 'admin'] as const) {
      const agent = await app.inject({ method: 'POST', url: '/api/agent/run/stream', headers: auth[who], payload: { scenarioId: 'protocol-qa', input: 'continue', conversationId: agentConversation.id } });
      expect(agent.statusCode, who).toBe(who === 'admin' ? 403 : 404);
      expect(agent.headers['content-type']).toMatch(/^application\/json/);
    }
    expect(model.requests).toHaveLength(0);
  });

  it('keeps a conversation with its agent: another scenario, or the assistant, continuing it is 409 before any work', async () => {
    const crcA = (await ctx.users.get(ids.crcA!))!;
    const started = await ctx.conversations.start({ actor: crcA, scenarioId: 'data-completeness', title: 'completeness' });
    const assistantConversation = await ctx.conversations.start({ actor: crcA, projectId: 'trial-a', title: 'assistant' });
    for (const url of ['/api/agent/run', '/api/agent/run/stream']) {
      for (const conversationId of [started.id, assistantConversation.id]) {
        const crossed = await app.inject({ method: 'POST', url, headers: auth.crcA, payload: { scenarioId: 'protocol-qa', input: 'inclusion criteria?', conversationId } });
        expect(crossed.statusCode, url).toBe(409);
        expect(crossed.headers['content-type']).toMatch(/^application\/json/);
        expect(crossed.json().message).toContain('not to scenario "protocol-qa"');
      }
    }
    expect((await ctx.conversations.get(started.id, crcA)).turns).toHaveLength(0);
    expect(model.requests).toHaveLength(0);
  });
});
