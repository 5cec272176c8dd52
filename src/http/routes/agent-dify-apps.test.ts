import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngines } from '../../runtime/engines/index.js';
import { createLogger } from '../../core/logger.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { postEventStream, type ReceivedEvent } from '../../testing/read-event-stream.js';
import { startScriptedDify, type DifyStep, type ScriptedDify } from '../../testing/scripted-dify.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

const APP_KEY = 'app-Dify-Apps-Key-0123456789abcdef';

/** A workflow's stream as Dify sends it: started, each node started and finished, text chunks, then finished. */
const workflowRun = (nodes: Array<{ id: string; type: string; title: string; status?: string; error?: string }>, finished: Record<string, unknown>, chunks: string[] = []): DifyStep => ({
  events: [
    { event: 'workflow_started', data: { id: 'run-1', workflow_id: 'wf-1', created_at: 1_760_000_000 } },
    ...nodes.flatMap((node, i) => [
      { event: 'node_started', data: { id: `exec-${i}`, node_id: node.id, node_type: node.type, title: node.title, index: i + 1 } },
      ...(node.type === 'llm' ? chunks.map((text) => ({ event: 'text_chunk', data: { text, from_variable_selector: [node.id, 'text'] } })) : []),
      'ping' as const,
      { event: 'node_finished', data: { id: `exec-${i}`, node_id: node.id, node_type: node.type, title: node.title, index: i + 1, status: node.status ?? 'succeeded', error: node.error ?? null, elapsed_time: 0.25, execution_metadata: { total_tokens: 40 } } },
    ]),
    { event: 'workflow_finished', data: { id: 'run-1', elapsed_time: 0.9, ...finished } },
  ],
});

/**
 * Every kind of Dify app through the API a user calls (issue 33): start-form inputs (the scenario's and the run's),
 * workflows (input variable, output key, node spans, a failing node), completion apps, moderation's
 * message_replace and the files tools make; and a server that starts with one invalid scenario file.
 */
describe.each(testEngines())('every kind of Dify app (%s)', (engine) => {
  let dify: ScriptedDify;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let url: string;
  let token: string;
  let adminToken: string;
  const logLines: string[] = [];
  let dir: string;

  beforeAll(async () => {
    dify = await startScriptedDify();
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-dify-apps-'));
    const engineBlock = (lines: string) => `engine:\n  type: dify\n  base_url: ${dify.baseURL}\n  api_key_env: DIFY_APPS_KEY\n${lines}`;
    writeFileSync(path.join(dir, 'form.yaml'), `id: dify-form\nname: Form\n${engineBlock('  app_mode: chat\n  inputs:\n    site: S01\n    visit: 2\n')}`);
    writeFileSync(path.join(dir, 'workflow.yaml'), `id: dify-workflow\nname: Workflow\n${engineBlock('  app_mode: workflow\n  input_variable: question\n  output_key: answer\n  inputs:\n    language: en\n')}`);
    writeFileSync(path.join(dir, 'completion.yaml'), `id: dify-completion\nname: Completion\n${engineBlock('  app_mode: completion\n  inputs:\n    tone: formal\n')}`);
    writeFileSync(path.join(dir, 'plain.yaml'), 'id: plain\nname: Plain\nsystem_prompt: Be brief.\n');
    // Three layers of problems in one file: a bad field, a missing document, an unknown tool.
    writeFileSync(path.join(dir, 'broken.yaml'), 'id: broken\nname: Broken\nsystem_prompt: p\nmax_tool_rounds: 99\ndocuments: [nowhere.md]\ntools: [launch_rocket]\n');
    const sink = new Writable({ write(chunk, _encoding, done) { logLines.push(String(chunk)); done(); } });
    const base = await buildTestContext({ engine, env: { SCENARIOS_DIR: dir, DIFY_ALLOWED_HOSTS: '127.0.0.1' }, logger: createLogger('debug', sink) });
    ctx = { ...base, engines: createEngines({ dify: { env: { DIFY_APPS_KEY: APP_KEY }, secrets: base.secrets, retryDelaysMs: [1], allowedHosts: base.config.dify.allowedHosts } }) };
    app = await buildServer(ctx, { serveConsole: false });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    token = (await ctx.users.create({ name: 'coordinator', role: 'coordinator' })).token;
    adminToken = (await ctx.users.create({ name: 'scenario-admin', role: 'admin' })).token;
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await dify?.close();
  });

  const headers = (as = token) => ({ 'content-type': 'application/json', authorization: `Bearer ${as}` });

  async function run(body: Record<string, unknown>, as = token): Promise<{ status: number; result: any }> {
    const response = await fetch(`${url}/api/agent/run`, { method: 'POST', headers: headers(as), body: JSON.stringify(body) });
    return { status: response.status, result: await response.json() };
  }

  const streamed = (body: Record<string, unknown>): Promise<ReceivedEvent[]> => postEventStream(`${url}/api/agent/run/stream`, token, body);

  it('sends the scenario\'s start-form inputs with the run\'s merged over them, which a required variable needs', async () => {
    const answer: DifyStep = { events: [{ event: 'message', answer: 'Site S01, visit 3.' }, { event: 'message_end', metadata: {} }], requiredInputs: ['site', 'patient'] };
    dify.push({ ...answer });
    const without = await run({ scenarioId: 'dify-form', input: 'Summarise the visit' });
    expect(without.result.status).toBe('failed');
    expect(without.result.error).toContain('invalid_param (HTTP 400): patient is required in input form');
    expect(without.result.error).toContain("Give the app's start-form values: engine.inputs in the scenario file");

    dify.push({ ...answer });
    const { status, result } = await run({ scenarioId: 'dify-form', input: 'Summarise the visit', inputs: { patient: 'P-007', visit: 3, fasting: true } });
    expect(status).toBe(200);
    expect(result).toMatchObject({ status: 'success', answer: 'Site S01, visit 3.' });
    expect(dify.requests.at(-1)!.body.inputs).toEqual({ site: 'S01', visit: 3, patient: 'P-007', fasting: true });

    dify.push({ ...answer });
    const events = await streamed({ scenarioId: 'dify-form', input: 'Summarise the visit', inputs: { patient: 'P-008' } });
    expect(events.at(-1)!.data).toMatchObject({ status: 'success' });
    expect(dify.requests.at(-1)!.body.inputs).toEqual({ site: 'S01', visit: 2, patient: 'P-008' });
  });

  it('refuses inputs that are not start-form values, or that a built-in scenario cannot take, with a 400 before any call', async () => {
    const before = dify.requests.length;
    const nested = await run({ scenarioId: 'dify-form', input: 'x', inputs: { patient: { id: 7 } } });
    expect(nested.status).toBe(400);
    expect(nested.result.message).toBe('Invalid request:\n- body.inputs.patient: must be string,number,boolean');
    const badName = await run({ scenarioId: 'dify-form', input: 'x', inputs: { 'not a name': 'y' } });
    expect(badName.status).toBe(400);
    expect(badName.result.message).toBe('Invalid request:\n- inputs.not a name: must be a Dify variable name: letters, digits and _, not starting with a digit, at most 64');
    const tooLong = await run({ scenarioId: 'dify-form', input: 'x', inputs: { note: 'a'.repeat(20_001) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.result.message).toBe('Invalid request:\n- body.inputs.note: must NOT have more than 20000 characters');
    const tooMany = await run({ scenarioId: 'dify-form', input: 'x', inputs: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, i])) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.result.message).toBe('Invalid request:\n- body.inputs: must NOT have more than 50 properties');
    const builtin = await run({ scenarioId: 'plain', input: 'x', inputs: { site: 'S01' } });
    expect(builtin.status).toBe(400);
    expect(builtin.result.message).toContain('runs on the builtin engine, which takes no inputs');
    const overwrite = await run({ scenarioId: 'dify-workflow', input: 'x', inputs: { question: 'other' } });
    expect(overwrite.status).toBe(400);
    expect(overwrite.result.message).toContain("inputs.question: is where scenario dify-workflow puts the run's text");
    // A completion app reads the text from inputs.query when no input_variable is named: a run's own query would be dropped.
    const query = await run({ scenarioId: 'dify-completion', input: 'x', inputs: { query: 'other' } });
    expect(query.status).toBe(400);
    expect(query.result.message).toContain("inputs.query: is where scenario dify-completion puts the run's text");
    expect(dify.requests.length).toBe(before);
  });

  it('runs a workflow: the text in its input variable, the answer its named output, each node a trace span', async () => {
    dify.push(
      workflowRun(
        [
          { id: 'start', type: 'start', title: 'Start' },
          { id: 'llm-1', type: 'llm', title: 'Draft answer' },
          { id: 'end', type: 'end', title: 'End' },
        ],
        { status: 'succeeded', outputs: { answer: 'Visit 2 is at week 4.', confidence: 0.9 }, error: null, total_tokens: 40 },
        ['Visit 2 ', 'is at week 4.'],
      ),
    );
    const events = await streamed({ scenarioId: 'dify-workflow', input: 'When is visit 2?', inputs: { language: 'fr' } });
    const request = dify.requests.at(-1)!;
    expect(request.path).toBe('/v1/workflows/run');
    expect(request.body).toEqual({ inputs: { language: 'fr', question: 'When is visit 2?' }, user: expect.any(String), response_mode: 'streaming' });
    expect(events.filter((e) => e.event === 'text_delta').map((e) => e.data.text)).toEqual(['Visit 2 ', 'is at week 4.']);
    expect(events.map((e) => e.event)).not.toContain('text_replaced');
    const result = events.at(-1)!.data;
    expect(result).toMatchObject({ status: 'success', answer: 'Visit 2 is at week 4.', structuredOutput: { answer: 'Visit 2 is at week 4.', confidence: 0.9 }, modelName: 'dify:workflow', files: [] });

    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace?.status).toBe('success');
    expect(trace!.spans.find((s) => s.name === 'dify:workflows')).toMatchObject({ kind: 'llm', status: 'success', promptTokens: 40 });
    const nodes = trace!.spans.filter((s) => s.kind === 'step');
    expect(nodes.map((s) => [s.name, s.status])).toEqual([
      ['dify:node Start', 'success'],
      ['dify:node Draft answer', 'success'],
      ['dify:node End', 'success'],
    ]);
    expect(nodes[1]!.input).toMatchObject({ nodeId: 'llm-1', nodeType: 'llm' });
  });

  it('answers with the named output even when the streamed text differs, telling stream clients with text_replaced', async () => {
    dify.push(workflowRun([{ id: 'llm-1', type: 'llm', title: 'Draft' }], { status: 'succeeded', outputs: { answer: { visit: 2, week: 4 } }, total_tokens: 5 }, ['thinking...']));
    const events = await streamed({ scenarioId: 'dify-workflow', input: 'When is visit 2?' });
    const replaced = events.find((e) => e.event === 'text_replaced')!;
    expect(replaced.data).toMatchObject({ type: 'text_replaced', text: '{"visit":2,"week":4}' });
    expect(events.at(-1)!.data).toMatchObject({ status: 'success', answer: '{"visit":2,"week":4}' });
  });

  it('reports a workflow that failed in a node with its own error and the node, not a missing message_end', async () => {
    dify.push(
      workflowRun(
        [
          { id: 'start', type: 'start', title: 'Start' },
          { id: 'http-1', type: 'http-request', title: 'Fetch visit plan', status: 'failed', error: 'Request timed out after 10s' },
        ],
        { status: 'failed', outputs: null, error: 'Node Fetch visit plan run failed: Request timed out after 10s', total_tokens: 0 },
      ),
    );
    const { status, result } = await run({ scenarioId: 'dify-workflow', input: 'When is visit 2?' });
    expect(status).toBe(200);
    expect(result.status).toBe('failed');
    expect(result.error).toContain('failed in node "Fetch visit plan" (http-request): Node Fetch visit plan run failed: Request timed out after 10s');
    expect(result.error).not.toContain('message_end');
    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace!.spans.find((s) => s.name === 'dify:node Fetch visit plan')).toMatchObject({ status: 'failed', error: 'Request timed out after 10s' });
  });

  it('names the outputs a workflow has when the one the scenario names is missing', async () => {
    dify.push(workflowRun([{ id: 'llm-1', type: 'llm', title: 'Draft' }], { status: 'succeeded', outputs: { text: 'Week 4.' }, total_tokens: 0 }, ['Week 4.']));
    const { result } = await run({ scenarioId: 'dify-workflow', input: 'When is visit 2?' });
    expect(result.status).toBe('failed');
    expect(result.error).toContain('finished without the output "answer" that engine.output_key names (its outputs: text)');
    // The streamed text is not logged as the answer: the next turn's history would read it as one.
    const log = (await (await fetch(`${url}/api/conversations/${result.conversationId}`, { headers: headers() })).json()) as { turns: Array<{ role: string }> };
    expect(log.turns.map((turn) => turn.role)).toEqual(['user']);
  });

  it('runs a completion app with the text in inputs.query', async () => {
    dify.push({ events: [{ event: 'message', answer: 'Dear site, ' }, { event: 'message', answer: 'please reply.' }, { event: 'message_end', metadata: { usage: { prompt_tokens: 9, completion_tokens: 4 } } }], requiredInputs: ['query', 'tone'] });
    const { result } = await run({ scenarioId: 'dify-completion', input: 'Write a reminder' });
    const request = dify.requests.at(-1)!;
    expect(request.path).toBe('/v1/completion-messages');
    expect(request.body).toEqual({ inputs: { tone: 'formal', query: 'Write a reminder' }, user: expect.any(String), response_mode: 'streaming' });
    expect(result).toMatchObject({ status: 'success', answer: 'Dear site, please reply.', modelName: 'dify:completion' });
  });

  it('replaces the answer on message_replace and tells stream clients with text_replaced', async () => {
    dify.push({ events: [{ event: 'message', answer: 'Something unsafe' }, { event: 'message_replace', answer: 'This answer was withheld.', reason: 'moderation' }, { event: 'message_end', metadata: {} }] });
    const events = await streamed({ scenarioId: 'dify-form', input: 'Tell me something', inputs: { patient: 'P-1' } });
    expect(events.map((e) => e.event)).toEqual(['run_started', 'text_delta', 'text_replaced', 'result']);
    expect(events[2]!.data).toEqual({ type: 'text_replaced', text: 'This answer was withheld.', reason: 'moderation' });
    expect(events.at(-1)!.data).toMatchObject({ status: 'success', answer: 'This answer was withheld.' });
  });

  it('keeps the files a tool made (message_file) in the result, a path resolved on the app host, no script URL', async () => {
    dify.push({
      events: [
        { event: 'message_file', id: 'file-1', type: 'image', url: '/files/tools/chart.png?sign=abc', belongs_to: 'assistant' },
        { event: 'message_file', id: 'file-2', type: 'document', url: 'https://cdn.example.org/report.pdf', belongs_to: 'assistant' },
        { event: 'message_file', id: 'file-3', type: 'custom', url: 'javascript:alert(1)', belongs_to: 'assistant' },
        { event: 'message', answer: 'Here is the chart.' },
        { event: 'message_end', metadata: {} },
      ],
    });
    const { result } = await run({ scenarioId: 'dify-form', input: 'Chart the enrolment', inputs: { patient: 'P-1' } });
    expect(result).toMatchObject({ status: 'success', answer: 'Here is the chart.' });
    expect(result.files).toEqual([
      { id: 'file-1', type: 'image', url: `${new URL(dify.baseURL).origin}/files/tools/chart.png?sign=abc`, belongsTo: 'assistant' },
      { id: 'file-2', type: 'document', url: 'https://cdn.example.org/report.pdf', belongsTo: 'assistant' },
      { id: 'file-3', type: 'custom', url: '', belongsTo: 'assistant' },
    ]);
  });

  it('starts with an invalid scenario file: serves the others, lists it with every problem and refuses its runs naming them (to admins)', async () => {
    type Listed = { scenarios: Array<{ id: string; engine: Record<string, unknown> }>; invalid: Array<{ file: string; id: string | null; problems: string[] }> };
    const listed = (await (await fetch(`${url}/api/scenarios`, { headers: headers(adminToken) })).json()) as Listed;
    expect(listed.scenarios.map((s) => s.id).sort()).toEqual(['dify-completion', 'dify-form', 'dify-workflow', 'plain']);
    expect(listed.scenarios.find((s) => s.id === 'dify-workflow')!.engine).toEqual({ type: 'dify', appMode: 'workflow', host: new URL(dify.baseURL).host, inputNames: ['language'] });
    expect(listed.invalid).toHaveLength(1);
    expect(listed.invalid[0]).toMatchObject({ file: 'broken.yaml', id: 'broken' });
    const problems = listed.invalid[0]!.problems;
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^max_tool_rounds: /), expect.stringMatching(/^documents\.0: file .*nowhere\.md does not exist/), expect.stringMatching(/^tools\.0: "launch_rocket" is not a registered tool/)]));
    expect(logLines.join('')).toContain('broken.yaml is invalid');
    // The problems name files as the scenario author wrote them, never the server's folders.
    expect(problems).toContain('documents.0: file nowhere.md does not exist or cannot be read');
    expect(JSON.stringify(listed.invalid)).not.toContain(dir);
    // A problem may quote the file (a YAML error shows its line): only admins, who fix scenario files, read them.
    const asCoordinator = (await (await fetch(`${url}/api/scenarios`, { headers: headers() })).json()) as Listed;
    expect(asCoordinator.scenarios).toHaveLength(4);
    expect(asCoordinator.invalid).toEqual([]);
    const refusedToCoordinator = await run({ scenarioId: 'broken', input: 'Hello?' });
    expect(refusedToCoordinator.status).toBe(422);
    expect(refusedToCoordinator.result).toMatchObject({ code: 'SCENARIO_INVALID', details: { scenarioId: 'broken' } });
    expect(refusedToCoordinator.result.message).toBe('Scenario "broken" is not served: its file is invalid. Ask an admin to fix it; admins see its problems in the scenario list (GET /api/scenarios) and the server\'s log.');

    const refused = await run({ scenarioId: 'broken', input: 'Hello?' }, adminToken);
    expect(refused.status).toBe(422);
    expect(refused.result.code).toBe('SCENARIO_INVALID');
    expect(refused.result.message).toContain('launch_rocket');
    expect(refused.result.message).toContain('max_tool_rounds');
    expect(refused.result.message).toContain('its file broken.yaml is invalid');
    expect(JSON.stringify(refused.result)).not.toContain(dir);
  });
});
