import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../core/db/connect.js';
import { consultClient } from '../../testing/consult-client.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { startServerOn, type ServerOnDatabase } from '../../testing/server-on-database.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';

const decide = (decision: Record<string, unknown>) => ({ reply: JSON.stringify(decision) });

/** What the patient said and the model answered: neither is anyone's to read but the patient's. */
const PATIENT_WORDS = 'a burning itch in the groin since my last trip';
const MODEL_WORDS = 'How long has the burning itch lasted?';

/**
 * Issue 32: a consult (and a Protocol Agent conversation) is its owner's; an admin gets 404 on it, so its trace
 * must not show the admin what was said. Admins see that it ran, its timings, tokens and status.
 */
describe.each(testEngines())('traces of private conversations (%s)', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let patient: { token: string; id: string };
  let adminToken: string;
  let memberToken: string;

  const patientClient = consultClient(() => ({ url: server.url, token: patient.token }));
  const get = (path: string, token: string) => patientClient.call('GET', path, undefined, token);

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL });
    const created = await server.ctx.users.create({ name: 'trace-patient', role: 'coordinator' });
    patient = { token: created.token, id: created.user.id };
    adminToken = (await server.ctx.users.create({ name: 'trace-admin', role: 'admin' })).token;
    const member = await server.ctx.users.create({ name: 'trace-member', role: 'coordinator' });
    memberToken = member.token;
    await server.ctx.users.createProject({ id: 'trace-trial', name: 'Trace trial' });
    await server.ctx.users.addMember('trace-trial', created.user.id);
    await server.ctx.users.addMember('trace-trial', member.user.id);
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it("shows an admin a consult's trace as timings, tokens and status, without the patient's or the model's words", async () => {
    const sessionId = await patientClient.start();
    model.push(decide({ thought: 'Ask how long.', action: 'respond', response: MODEL_WORDS, quick_options: ['Days', 'Weeks'] }));
    const reply = await patientClient.say(sessionId, `I have ${PATIENT_WORDS}.`);

    // The documented rule the trace must agree with: the consult is the patient's.
    expect((await get(`/api/consult/sessions/${sessionId}`, adminToken)).status).toBe(404);

    const own = await get(`/api/traces/${reply.traceId}`, patient.token);
    expect(own.status).toBe(200);
    expect(JSON.stringify(own.body)).toContain(PATIENT_WORDS);
    expect(own.body.contentWithheld).toBeUndefined();

    const admin = await get(`/api/traces/${reply.traceId}`, adminToken);
    expect(admin.status).toBe(200);
    const text = JSON.stringify(admin.body);
    expect(text).not.toContain(PATIENT_WORDS);
    expect(text).not.toContain('burning itch');
    expect(admin.body).toMatchObject({ kind: 'consult', status: 'success', contentWithheld: true, input: null, output: null, userId: patient.id });
    expect(admin.body.promptTokens).toBeGreaterThan(0);
    expect(admin.body.durationMs).toBeGreaterThanOrEqual(0);
    expect(admin.body.spans.length).toBeGreaterThan(0);
    for (const span of admin.body.spans) {
      expect(span).toMatchObject({ input: null, output: null, error: null });
      expect(typeof span.durationMs).toBe('number');
    }
    expect(admin.body.spans.some((span: { promptTokens: number }) => span.promptTokens > 0)).toBe(true);

    const listed = await get('/api/traces?limit=500', adminToken);
    const entry = listed.body.traces.find((t: { id: string }) => t.id === reply.traceId);
    expect(entry).toMatchObject({ kind: 'consult', status: 'success', contentWithheld: true });
  });

  it("hides a member's private conversation over a project from the project's other members", async () => {
    // A Protocol Agent conversation for the trial, as the staged agent's runs record it.
    const run = await server.ctx.trace.start({ kind: 'staged_agent', name: 'protocol', userId: patient.id, projectId: 'trace-trial', input: { conversationId: '0b9c1f0e-0000-4000-8000-000000000001', message: PATIENT_WORDS } });
    await run.finish({ status: 'success', output: MODEL_WORDS });
    // A run over the project that is nobody's conversation stays readable to its members.
    const qc = await server.ctx.trace.start({ kind: 'sop', name: 'qc', projectId: 'trace-trial', input: { taskRunId: 'x' } });
    await qc.finish({ status: 'success' });

    expect((await get(`/api/traces/${run.traceId}`, memberToken)).status).toBe(404);
    expect((await get(`/api/traces/${qc.traceId}`, memberToken)).status).toBe(200);
    const listed = (await get('/api/traces?limit=500', memberToken)).body.traces.map((t: { id: string }) => t.id);
    expect(listed).toContain(qc.traceId);
    expect(listed).not.toContain(run.traceId);
    expect(JSON.stringify((await get(`/api/traces/${run.traceId}`, patient.token)).body)).toContain(PATIENT_WORDS);
  });
});
