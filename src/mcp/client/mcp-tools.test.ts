import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentResult, AgentRun, Trace } from '../../contract/index.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { packageRoot } from '../../core/paths.js';
import { buildServer } from '../../http/server.js';
import { MCP_TEST_TOKEN, startMcpTestServer, type McpTestServer } from '../../testing/mcp-test-server.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';

/** A loopback port nothing listens on: an MCP server that is down. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const SCENARIO = `
id: lab-helper
name: Lab helper
system_prompt: Answer questions about visits with the lab tools.
mcp:
  - server: labdata
    tools: [lookup_visit, visit_counts, long_report, failing_lookup, slow_lookup]
  - server: textkit
    tools: [count_words, crash]
  - server: offline
    tools: [lookup_visit]
max_tool_rounds: 6
`;

/**
 * An agent uses tools of MCP servers the test starts with the official SDK (Streamable HTTP on loopback with a
 * bearer token, and a stdio process), configured as an administrator would, through the real server and the
 * scripted model: what the model is offered, what it gets back, the trace and the audit trail, and every way a
 * server can fail a call (a bad argument, a tool not allowed, an error answer, slow, down at start-up, gone later).
 */
describe.each(testEngines())('MCP tools in a scenario on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let model: ScriptedModel;
  let labdata: McpTestServer;
  let dir: string;
  let token: string;
  let workers: { stop(): void } | undefined;

  const run = async (input: string) => {
    const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: { authorization: `Bearer ${token}` }, payload: { scenarioId: 'lab-helper', input } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<AgentResult>();
  };
  /** The tool message the model got for a call, from the request that followed it. */
  const toolMessageAfter = (requestIndex: number) => (model.requests[requestIndex]!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool').map((m) => m.content);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-mcp-tools-'));
    labdata = await startMcpTestServer();
    const scenariosDir = path.join(dir, 'scenarios');
    writeFileSync(path.join(dir, 'mcp-servers.yaml'), `
servers:
  labdata:
    url: ${labdata.url}
    bearer_token_env: MCP_SECRET_LABDATA_TOKEN
    timeout_ms: 2000
  textkit:
    command: ${JSON.stringify(process.execPath)}
    args: [--import, tsx, src/testing/mcp-stdio-server.ts]
    cwd: ${JSON.stringify(packageRoot())}
    env:
      MCP_TEST_GREETING: MCP_SECRET_TEXTKIT_GREETING
  offline:
    url: http://127.0.0.1:${await closedPort()}/mcp
    timeout_ms: 2000
`);
    mkdirSync(scenariosDir);
    writeFileSync(path.join(scenariosDir, 'lab-helper.yaml'), SCENARIO);
    // Secrets come from the server's environment, as an administrator sets them; CLINAGENT_TEST_PLANTED must not
    // reach the stdio process, which gets only what its configuration names.
    process.env.MCP_SECRET_LABDATA_TOKEN = MCP_TEST_TOKEN;
    process.env.MCP_SECRET_TEXTKIT_GREETING = 'hello from the secret';
    process.env.CLINAGENT_TEST_PLANTED = 'planted';
    model = await startScriptedModel([], { fallback: { reply: 'Done.' } });
    ctx = await buildTestContext({
      engine, llmBaseUrl: model.baseURL, startJobs: true,
      env: { SCENARIOS_DIR: scenariosDir, MCP_SERVERS_FILE: path.join(dir, 'mcp-servers.yaml'), MCP_ALLOWED_HOSTS: '127.0.0.1' },
    });
    app = await buildServer(ctx, { serveConsole: false });
    token = (await ctx.users.create({ name: 'mcp-coordinator', role: 'coordinator' })).token;
    workers = await ctx.agentRunHost.start({ concurrency: 1, sweepIntervalMs: 60_000, staleMs: 60_000 });
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
    await model?.close();
    await labdata?.close();
    delete process.env.MCP_SECRET_LABDATA_TOKEN;
    delete process.env.MCP_SECRET_TEXTKIT_GREETING;
    delete process.env.CLINAGENT_TEST_PLANTED;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('offers the allowed MCP tools with the server\'s schema, runs one over Streamable HTTP, gives the model its result, and traces it as a tool span', async () => {
    const first = model.requests.length;
    model.push({ toolCalls: [{ name: 'mcp__labdata__lookup_visit', arguments: { visit: 3 } }] }, { reply: 'Visit 3 is at week 12.' });
    const result = await run('Where is visit 3?');
    expect(result).toMatchObject({ status: 'success', answer: 'Visit 3 is at week 12.' });
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'mcp__labdata__lookup_visit', success: true, result: 'Visit 3: week 12, labs complete.' })]);
    expect(labdata.calls.at(-1)).toEqual({ tool: 'lookup_visit', args: { visit: 3 } });

    const offered = model.requests[first]!.body.tools as Array<{ function: { name: string; description: string; parameters: any } }>;
    expect(offered.map((t) => t.function.name).sort()).toEqual(['mcp__labdata__failing_lookup', 'mcp__labdata__long_report', 'mcp__labdata__lookup_visit', 'mcp__labdata__slow_lookup', 'mcp__labdata__visit_counts', 'mcp__offline__lookup_visit', 'mcp__textkit__count_words', 'mcp__textkit__crash']);
    const lookup = offered.find((t) => t.function.name === 'mcp__labdata__lookup_visit')!.function;
    expect(lookup.description).toBe('The visit schedule status of a visit number. (from MCP server labdata)');
    expect(lookup.parameters).toMatchObject({ type: 'object', properties: { visit: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['visit'] });
    expect(lookup.parameters.$schema).toBeUndefined();
    expect(toolMessageAfter(first + 1).join('\n')).toContain('Visit 3: week 12, labs complete.');

    const trace = await waitFor(async () => {
      await ctx.trace.flush();
      const response = await app.inject({ method: 'GET', url: `/api/traces/${result.traceId}`, headers: { authorization: `Bearer ${token}` } });
      return response.statusCode === 200 ? response.json<Trace>() : undefined;
    }, 'the run\'s trace');
    expect(trace.spans.filter((s) => s.kind === 'tool')).toEqual([expect.objectContaining({ name: 'mcp__labdata__lookup_visit', status: 'success', input: { arguments: '{"visit":3}' }, output: 'Visit 3: week 12, labs complete.' })]);
  });

  it('refuses arguments the server\'s schema refuses before the server is called, naming each field, and the run goes on', async () => {
    const callsBefore = labdata.calls.length;
    model.push({ toolCalls: [{ name: 'mcp__labdata__lookup_visit', arguments: { visit: 0 } }, { name: 'mcp__labdata__lookup_visit', arguments: {} }] }, { reply: 'I could not look it up.' });
    const result = await run('Where is visit 0?');
    expect(result).toMatchObject({ status: 'success', answer: 'I could not look it up.' });
    expect(result.toolCalls.map((c) => [c.success, c.error])).toEqual([
      [false, 'Invalid arguments for mcp__labdata__lookup_visit:\nvisit: must be >= 1'],
      [false, 'Invalid arguments for mcp__labdata__lookup_visit:\nvisit: is required'],
    ]);
    expect(labdata.calls.length).toBe(callsBefore);
  });

  it('neither offers nor runs a tool of the server the scenario did not allow', async () => {
    const first = model.requests.length;
    model.push({ toolCalls: [{ name: 'mcp__labdata__delete_visit', arguments: { visit: 3 } }] }, { reply: 'I may not delete visits.' });
    const result = await run('Delete visit 3.');
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'mcp__labdata__delete_visit', success: false, error: expect.stringContaining('"mcp__labdata__delete_visit" is not allowed') })]);
    expect((model.requests[first]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).not.toContain('mcp__labdata__delete_visit');
    expect(labdata.calls.some((c) => c.tool === 'delete_visit')).toBe(false);
  });

  it('gives structured content as the result, cuts a long text saying so, and fails a call the server answers as an error with its message', async () => {
    model.push({ toolCalls: [
      { name: 'mcp__labdata__visit_counts', arguments: { site: 'north' } },
      { name: 'mcp__labdata__long_report', arguments: {} },
      { name: 'mcp__labdata__failing_lookup', arguments: {} },
    ] }, { reply: 'North has 12 complete visits.' });
    const result = await run('How many visits are complete in the north?');
    const [counts, long, failing] = result.toolCalls;
    expect(counts).toMatchObject({ success: true, result: { site: 'north', complete: 12 } });
    expect(long!.success).toBe(true);
    expect(long!.result).toMatch(/^x{20000}\n\[cut: the tool answered 50000 characters; only the first 20000 are shown \(max_result_chars of this MCP server\)\]$/);
    expect(failing).toMatchObject({ success: false, error: 'mcp__labdata__failing_lookup failed: MCP server "labdata" answered that failing_lookup failed: the lab system is in maintenance' });
    expect(result.answer).toBe('North has 12 complete visits.');
  });

  it('runs a tool of a stdio server started from its configured command, which gets only the secret its configuration names', async () => {
    model.push({ toolCalls: [{ name: 'mcp__textkit__count_words', arguments: { text: 'three short words' } }] }, { reply: 'Three words.' });
    const result = await run('Count the words of "three short words".');
    expect(result.toolCalls).toEqual([expect.objectContaining({ success: true, result: '3 words (hello from the secret; planted variable absent)' })]);
    expect(result.answer).toBe('Three words.');
  });

  it('fails the call during which a stdio server exits, naming it, and starts the server again for the next call', async () => {
    model.push({ toolCalls: [{ name: 'mcp__textkit__crash', arguments: {} }] }, { toolCalls: [{ name: 'mcp__textkit__count_words', arguments: { text: 'back again' } }] }, { reply: 'It is back.' });
    const result = await run('Crash the text kit, then count.');
    expect(result.toolCalls.map((c) => [c.toolName, c.success, c.success ? c.result : c.error])).toEqual([
      ['mcp__textkit__crash', false, expect.stringMatching(/^mcp__textkit__crash failed: MCP server "textkit" failed calling crash: .*Connection closed.*ClinAgent connects again at the next call\.$/s)],
      ['mcp__textkit__count_words', true, '2 words (hello from the secret; planted variable absent)'],
    ]);
    expect(result.answer).toBe('It is back.');
  });

  it('fails a call to a slow server after its timeout, naming the server, and the next call works', async () => {
    model.push({ toolCalls: [{ name: 'mcp__labdata__slow_lookup', arguments: {} }] }, { toolCalls: [{ name: 'mcp__labdata__lookup_visit', arguments: { visit: 2 } }] }, { reply: 'Visit 2 is at week 8.' });
    try {
      const result = await run('Look slowly.');
      expect(result.toolCalls.map((c) => [c.toolName, c.success, c.error])).toEqual([
        ['mcp__labdata__slow_lookup', false, 'mcp__labdata__slow_lookup failed: MCP server "labdata" did not answer within 2000 ms when calling slow_lookup (its timeout_ms in MCP_SERVERS_FILE, or MCP_TIMEOUT_MS).'],
        ['mcp__labdata__lookup_visit', true, ''],
      ]);
      expect(result.answer).toBe('Visit 2 is at week 8.');
    } finally {
      labdata.releaseSlow();
    }
  });

  it('serves a scenario whose server was down at start-up; each call of its tool fails naming the server, and the run still answers', async () => {
    const scenarios = await app.inject({ method: 'GET', url: '/api/scenarios', headers: { authorization: `Bearer ${token}` } });
    expect(scenarios.json<{ scenarios: Array<{ id: string; tools: string[] }> }>().scenarios.find((scenario) => scenario.id === 'lab-helper')?.tools).toContain('mcp__offline__lookup_visit');
    model.push({ toolCalls: [{ name: 'mcp__offline__lookup_visit', arguments: { visit: 1 } }] }, { reply: 'The lab service is unavailable.' });
    const result = await run('Where is visit 1?');
    expect(result.toolCalls).toEqual([expect.objectContaining({ success: false, error: expect.stringMatching(/^mcp__offline__lookup_visit failed: MCP server "offline" could not be reached: .*ECONNREFUSED.*ClinAgent connects again at the next call\.$/s) })]);
    expect(result).toMatchObject({ status: 'success', answer: 'The lab service is unavailable.' });
  });

  it('audits a durable run that used an MCP tool as it audits any run, and keeps the tool call in its trace', async () => {
    model.push({ toolCalls: [{ name: 'mcp__labdata__lookup_visit', arguments: { visit: 5 } }] }, { reply: 'Visit 5 is at week 20.' });
    const started = await app.inject({ method: 'POST', url: '/api/agent/runs', headers: { authorization: `Bearer ${token}` }, payload: { scenarioId: 'lab-helper', input: 'Where is visit 5?' } });
    expect(started.statusCode, started.body).toBe(202);
    const { id } = started.json<AgentRun>();
    const done = await waitFor(async () => {
      const current = (await app.inject({ method: 'GET', url: `/api/agent/runs/${id}`, headers: { authorization: `Bearer ${token}` } })).json<AgentRun>();
      return current.status === 'COMPLETED' || current.status === 'FAILED' ? current : undefined;
    }, 'the durable run to finish', 20_000, 50);
    expect(done).toMatchObject({ status: 'COMPLETED', answer: 'Visit 5 is at week 20.' });
    expect(labdata.calls.at(-1)).toEqual({ tool: 'lookup_visit', args: { visit: 5 } });
    const audit = await ctx.db.select().from(auditLog).where(and(eq(auditLog.entityType, 'agent_run'), eq(auditLog.entityId, id))).orderBy(asc(auditLog.id));
    expect(audit.map((entry) => [entry.action, entry.actor])).toEqual([['created', expect.any(String)], ['finished', 'agent:lab-helper']]);
  });

  it('fails a call clearly once the server has gone away, and the run still answers (never hangs)', async () => {
    await labdata.close();
    model.push({ toolCalls: [{ name: 'mcp__labdata__lookup_visit', arguments: { visit: 4 } }] }, { reply: 'The lab service is unavailable.' });
    const result = await run('Where is visit 4?');
    expect(result.toolCalls).toEqual([expect.objectContaining({ success: false, error: expect.stringMatching(/^mcp__labdata__lookup_visit failed: MCP server "labdata" (failed calling lookup_visit|could not be reached): .*ClinAgent connects again at the next call\.$/s) })]);
    expect(result).toMatchObject({ status: 'success', answer: 'The lab service is unavailable.' });
  });
});
