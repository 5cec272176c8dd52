import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_TRACES } from '../../core/trace/store.js';
import { startQcServer, type QcServer } from '../../testing/qc-server.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { compileRedcapLogic } from '../../trial/rules/redcap-logic/index.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import type { TrialField, TrialRecord } from '../../trial/store/types.js';

/**
 * ClinAgent as an MCP server, driven by the official SDK's client over real HTTP on loopback, each answer compared
 * with what the REST API answers the same user: who gets which tools, what each may read (and the attacker's
 * project id), identifier masking, the audit line of a write, QC runs, traces and argument errors.
 */
const PROJECT = 'mcp-trial';
const OTHER = 'mcp-other';
// Identifier values: each must show to a PI and never reach a trace. None is a valid phone, so each raises a query.
const PHONES = ['PHONE-7741-AAA', 'PHONE-7742-BBB', 'PHONE-7743-CCC'];
const ANSWER = 'Called the site: the subject gave PHONE-7741-AAA again, corrected in the source.';

const SKILL = `
id: mcp-checks
name: MCP checks
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - { id: phone-format, field: phone, logic: { matches: [{ var: phone }, "^1[3-9][0-9]{9}$"] }, message: "Phone must be 11 digits" }
      - { id: adult, field: age, logic: { ">=": [{ var: age }, 18] }, message: "Subject must be an adult" }
    on_pass: end_ok
    on_fail: end_found
`;

const field = (fieldName: string, fieldType: TrialField['fieldType'], label: string): TrialField => ({ fieldName, formName: 'enrolment', fieldType, label, choices: [], validationMin: null, validationMax: null, required: false });
const row = (recordId: string, site: string, phone: string, age: number): TrialRecord => ({ recordId, eventName: '', site, data: { record_id: recordId, phone, age } });

type Who = 'pi' | 'crc' | 'viewer' | 'outsider';
type ToolAnswer = { isError?: boolean; content: Array<{ type: string; text?: string }> };

describe.each(testEngines())('the MCP endpoint on %s', (engine) => {
  let server: QcServer | undefined;
  let ctx: QcServer['ctx'];
  let app: QcServer['app'];
  let url: URL;
  const tokens = {} as Record<Who, string>;
  const userIds = {} as Record<Who, string>;
  const clients: Client[] = [];

  const rest = async (who: Who, method: 'GET' | 'POST' | 'PATCH', path: string, payload?: object) => {
    const response = await app.inject({ method, url: path, headers: { authorization: `Bearer ${tokens[who]}` }, payload });
    return { status: response.statusCode, body: response.json() as any };
  };

  async function connect(who: Who): Promise<Client> {
    const client = new Client({ name: `mcp-test-${who}`, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${tokens[who]}` } } }));
    clients.push(client);
    return client;
  }

  /** A successful tool call's JSON result; a tool error fails the test with its text. */
  async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
    const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
    expect(answer.isError, answer.content[0]?.text).toBeFalsy();
    return JSON.parse(answer.content[0]!.text!);
  }

  /** A tool error's text. */
  async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
    const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
    expect(answer.isError).toBe(true);
    return answer.content[0]!.text!;
  }

  beforeAll(async () => {
    server = await startQcServer({ engine, name: 'mcp-server', skills: { 'mcp-checks': SKILL } });
    ({ ctx, app } = server);
    await ctx.users.createProject({ id: PROJECT, name: 'MCP trial' });
    await ctx.users.createProject({ id: OTHER, name: 'Another trial' });
    const roles: Record<Who, 'pi' | 'coordinator' | 'viewer'> = { pi: 'pi', crc: 'coordinator', viewer: 'viewer', outsider: 'coordinator' };
    for (const who of Object.keys(roles) as Who[]) {
      const made = await ctx.users.create({ name: `mcp-${who}`, role: roles[who] });
      tokens[who] = made.token;
      userIds[who] = made.user.id;
      await ctx.users.addMember(who === 'outsider' ? OTHER : PROJECT, made.user.id);
    }
    const store = createTrialStore(ctx.db);
    for (const project of [PROJECT, OTHER]) {
      await store.replaceDictionary(project, [field('record_id', 'text', 'Subject'), field('phone', 'text', 'Phone'), field('age', 'integer', 'Age')], 'test');
      await ctx.db.execute(sql`UPDATE trial_fields SET identifier = true WHERE project_id = ${project} AND field_name = 'phone'`);
    }
    await store.importRecords(PROJECT, [row('S001', 'SITE-01', PHONES[0]!, 40), row('S002', 'SITE-01', PHONES[1]!, 16), row('S003', 'SITE-02', PHONES[2]!, 52)], { actor: 'site' });
    await store.importRecords(OTHER, [row('X001', 'SITE-09', '13800138000', 17)], { actor: 'site' });
    // The queries come from real QC runs started through the API.
    for (const [who, project] of [['crc', PROJECT], ['outsider', OTHER]] as const) {
      const started = await rest(who, 'POST', `/api/iit/projects/${project}/qc-runs`, { skillId: 'mcp-checks' });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      await waitFor(async () => (await rest(who, 'GET', `/api/iit/qc-runs/${started.body.id}`)).body.status === 'completed', 'the QC run to complete');
    }
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`);
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.close();
  });

  it('refuses a request without a token or with a bad one with 401, WWW-Authenticate and what to send', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anonymous = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initialize) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="ClinAgent"');
    expect(await anonymous.json()).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringContaining('Authorization: Bearer <token>') });

    const forged = await fetch(url, { method: 'POST', headers: { ...headers, authorization: 'Bearer cla_not-a-token' }, body: JSON.stringify(initialize) });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer realm="ClinAgent", error="invalid_token"');
    expect(await forged.json()).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringContaining('The bearer token is unknown') });

    // The SDK's client sees the same refusal and connects to nothing.
    const client = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow(/UNAUTHENTICATED/);

    // A revoked token is refused as by the API.
    const made = await ctx.users.create({ name: 'mcp-revoked', role: 'viewer' });
    const auth = { authorization: `Bearer ${made.token}` };
    const [own] = (await app.inject({ method: 'GET', url: `/api/users/${made.user.id}/tokens`, headers: auth })).json().tokens;
    const revoked = await app.inject({ method: 'POST', url: `/api/tokens/${own.id}/revoke`, headers: auth });
    expect(revoked.statusCode, revoked.body).toBe(200);
    const afterRevoke = await fetch(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${made.token}` }, body: JSON.stringify(initialize) });
    expect(afterRevoke.status).toBe(401);
    expect(await afterRevoke.json()).toMatchObject({ message: expect.stringContaining('revoked') });
  });

  it('answers GET with 405 (stateless: no event stream) and is listed in the OpenAPI document', async () => {
    const stream = await fetch(url, { headers: { authorization: `Bearer ${tokens.viewer}`, accept: 'text/event-stream' } });
    expect(stream.status).toBe(405);
    expect(await stream.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('POST') } });
    const openapi = (await rest('viewer', 'GET', '/api/openapi.json')).body;
    expect(openapi.paths['/mcp'].post.description).toContain('Model Context Protocol');
  });

  it('offers a viewer only reads, and a coordinator the two writes besides', async () => {
    const viewerTools = (await (await connect('viewer')).listTools()).tools;
    const crcTools = (await (await connect('crc')).listTools()).tools;
    const names = (tools: typeof viewerTools) => tools.map((t) => t.name).sort();
    expect(names(viewerTools)).not.toContain('answer_query');
    expect(names(viewerTools)).not.toContain('start_qc_run');
    expect(viewerTools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect(names(crcTools)).toEqual([...names(viewerTools), 'answer_query', 'start_qc_run'].sort());
    for (const name of ['list_projects', 'list_queries', 'list_records', 'read_record', 'list_qc_runs', 'qc_run_status', 'violations_report', 'rule_yield', 'calculate_sample_size', 'compile_redcap_logic', 'spirit_checklist']) {
      expect(names(viewerTools)).toContain(name);
    }
    expect(crcTools.find((t) => t.name === 'answer_query')!.annotations?.readOnlyHint).toBe(false);
    // What is not listed cannot be called either.
    const query = (await rest('viewer', 'GET', `/api/iit/projects/${PROJECT}/queries`)).body.queries[0];
    const text = await refusal(await connect('viewer'), 'answer_query', { projectId: PROJECT, queryId: query.id, comment: ANSWER });
    expect(text).toContain('Unknown tool "answer_query"');
    // The attempt is traced, without the arguments a tool it does not know could not say were safe to keep.
    const attempt = (await ctx.trace.list(ALL_TRACES, { limit: 500 })).find((t) => t.kind === 'mcp' && t.name === 'answer_query' && t.userId === userIds.viewer)!;
    expect(attempt.status).toBe('failed');
    expect(JSON.stringify(await ctx.trace.get(attempt.id, ALL_TRACES))).not.toContain(PHONES[0]);
    expect((await rest('viewer', 'GET', `/api/iit/projects/${PROJECT}/queries?status=answered`)).body.total).toBe(0);
  });

  it("gives each user exactly their trials' data, as the API does, and another project's id answers not found", async () => {
    const crc = await connect('crc');
    const outsider = await connect('outsider');
    expect(await call(crc, 'list_projects')).toEqual((await rest('crc', 'GET', '/api/iit/projects')).body);
    const theirs = await call(outsider, 'list_projects');
    expect(theirs).toEqual((await rest('outsider', 'GET', '/api/iit/projects')).body);
    expect(theirs.projects.map((p: { id: string }) => p.id)).toEqual([OTHER]);

    const filtered = await call(crc, 'list_queries', { projectId: PROJECT, status: 'open', site: 'SITE-01', sort: 'recordId', order: 'asc' });
    expect(filtered).toEqual((await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/queries?status=open&site=SITE-01&sort=recordId&order=asc`)).body);
    expect(filtered.queries.map((q: { recordId: string }) => q.recordId)).toEqual(['S001', 'S002', 'S002']);
    expect(await call(crc, 'rule_yield', { projectId: PROJECT, skillId: 'mcp-checks' })).toEqual((await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/rule-yield?skillId=mcp-checks`)).body);
    expect(await call(crc, 'list_qc_runs', { projectId: PROJECT })).toEqual((await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/qc-runs`)).body);
    // The report says when it was made; the rest is the same.
    const { generatedAt: _made, ...report } = await call(crc, 'violations_report', { projectId: PROJECT });
    const { generatedAt: _alsoMade, ...apiReport } = (await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/report`)).body;
    expect(report).toEqual(apiReport);
    expect(report.rows).toHaveLength(4);

    // The attacker: a member of another trial names this one, and hears what the API says to them.
    for (const [tool, path] of [
      ['list_queries', `/api/iit/projects/${PROJECT}/queries`],
      ['list_records', `/api/iit/projects/${PROJECT}/records`],
      ['violations_report', `/api/iit/projects/${PROJECT}/report`],
      ['rule_yield', `/api/iit/projects/${PROJECT}/rule-yield`],
      ['list_qc_runs', `/api/iit/projects/${PROJECT}/qc-runs`],
    ] as const) {
      const api = await rest('outsider', 'GET', path);
      expect(api.status).toBe(404);
      expect(await refusal(outsider, tool, { projectId: PROJECT })).toBe(`${tool} failed: ${api.body.message}`);
    }
    const record = await rest('outsider', 'GET', `/api/iit/projects/${PROJECT}/records/S001`);
    expect(await refusal(outsider, 'read_record', { projectId: PROJECT, recordId: 'S001' })).toBe(`read_record failed: ${record.body.message}`);
    const run = (await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/qc-runs`)).body.qcRuns[0];
    const runApi = await rest('outsider', 'GET', `/api/iit/qc-runs/${run.id}`);
    expect(runApi.status).toBe(404);
    expect(await refusal(outsider, 'qc_run_status', { qcRunId: run.id })).toBe(`qc_run_status failed: ${runApi.body.message}`);
    // Starting a run there is refused as by the API, and starts nothing.
    const startApi = await rest('outsider', 'POST', `/api/iit/projects/${PROJECT}/qc-runs`, { skillId: 'mcp-checks' });
    expect(startApi.status).toBe(404);
    expect(await refusal(outsider, 'start_qc_run', { projectId: PROJECT, skillId: 'mcp-checks' })).toBe(`start_qc_run failed: ${startApi.body.message}`);
    expect((await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/qc-runs`)).body.qcRuns).toHaveLength(1);
  });

  it('returns records and queries masked exactly as the API does: identifiers hidden from a viewer, shown to the PI', async () => {
    const viewer = await connect('viewer');
    const pi = await connect('pi');
    const viewerRecords = await call(viewer, 'list_records', { projectId: PROJECT });
    expect(viewerRecords).toEqual((await rest('viewer', 'GET', `/api/iit/projects/${PROJECT}/records`)).body);
    expect(viewerRecords.records).toHaveLength(3);
    for (const record of viewerRecords.records) {
      expect(record.data.phone).toBeNull();
      expect(record.maskedFields).toEqual(['phone']);
    }
    const piRecords = await call(pi, 'list_records', { projectId: PROJECT, site: 'SITE-01', limit: 1, offset: 1 });
    expect(piRecords).toEqual((await rest('pi', 'GET', `/api/iit/projects/${PROJECT}/records?site=SITE-01&limit=1&offset=1`)).body);
    expect(piRecords.records.map((r: { data: { phone: string } }) => r.data.phone)).toEqual([PHONES[1]]);

    const viewerRecord = await call(viewer, 'read_record', { projectId: PROJECT, recordId: 'S001' });
    expect(viewerRecord).toEqual((await rest('viewer', 'GET', `/api/iit/projects/${PROJECT}/records/S001`)).body);
    expect(JSON.stringify(viewerRecord)).not.toContain(PHONES[0]);
    expect(await call(pi, 'read_record', { projectId: PROJECT, recordId: 'S001' })).toEqual((await rest('pi', 'GET', `/api/iit/projects/${PROJECT}/records/S001`)).body);

    // Concurrent calls of a viewer and the PI each get their own masking (a server per request, bound to its user).
    const [asViewer, asPi] = await Promise.all([call(viewer, 'list_records', { projectId: PROJECT }), call(pi, 'list_records', { projectId: PROJECT }), call(viewer, 'list_projects'), call(pi, 'list_projects')]);
    expect(asViewer).toEqual(viewerRecords);
    expect(asPi).toEqual((await rest('pi', 'GET', `/api/iit/projects/${PROJECT}/records`)).body);
    expect(asPi.records.map((r: { data: { phone: string } }) => r.data.phone).sort()).toEqual([...PHONES].sort());

    const viewerQueries = await call(viewer, 'list_queries', { projectId: PROJECT, field: 'phone' });
    expect(viewerQueries).toEqual((await rest('viewer', 'GET', `/api/iit/projects/${PROJECT}/queries?field=phone`)).body);
    expect(viewerQueries.queries.every((q: { value: unknown; masked: boolean }) => q.value === null && q.masked)).toBe(true);
    expect(JSON.stringify(await call(viewer, 'violations_report', { projectId: PROJECT }))).not.toMatch(/PHONE-774/);
  });

  it('answers a query through MCP with the same audit line as the route, and refuses a viewer-role change as the API does', async () => {
    const crc = await connect('crc');
    const open = (await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/queries?status=open&ruleId=adult`)).body.queries;
    const [viaMcp] = open;
    const viaRoute = (await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/queries?status=open&ruleId=phone-format&recordId=S003`)).body.queries[0];
    const answered = await call(crc, 'answer_query', { projectId: PROJECT, queryId: viaMcp.id, comment: ANSWER });
    const routeAnswer = await rest('crc', 'POST', `/api/iit/projects/${PROJECT}/queries/${viaRoute.id}/transition`, { to: 'answered', comment: ANSWER });
    expect(routeAnswer.status).toBe(200);
    expect(answered.status).toBe('answered');
    expect(answered).toEqual((await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/queries?status=answered&ruleId=adult`)).body.queries[0]);

    const lastAudit = async (queryId: string) => {
      const entries = (await rest('pi', 'GET', `/api/iit/projects/${PROJECT}/audit?entityType=query&entityId=${queryId}`)).body.entries;
      const { id: _id, entityId: _entityId, at: _at, ...line } = entries.at(-1);
      return line;
    };
    const mcpLine = await lastAudit(viaMcp.id);
    expect(mcpLine).toEqual(await lastAudit(viaRoute.id));
    expect(mcpLine).toMatchObject({ actor: 'mcp-crc', reason: ANSWER });
    expect(JSON.stringify(mcpLine)).toContain('answered');

    // A member whose role in the project is viewer is offered the write (a writer elsewhere) and refused as by the route.
    await ctx.users.addMember(PROJECT, userIds.outsider, 'test', 'viewer');
    const outsider = await connect('outsider');
    const other = (await rest('crc', 'GET', `/api/iit/projects/${PROJECT}/queries?status=open`)).body.queries[0];
    const api = await rest('outsider', 'POST', `/api/iit/projects/${PROJECT}/queries/${other.id}/transition`, { to: 'answered', comment: 'no' });
    expect(api.status).toBe(403);
    expect(await refusal(outsider, 'answer_query', { projectId: PROJECT, queryId: other.id, comment: 'no' })).toBe(`answer_query failed: ${api.body.message}`);
    await ctx.db.execute(sql`DELETE FROM project_members WHERE project_id = ${PROJECT} AND user_id = ${userIds.outsider}`);
  });

  it('starts a QC run for a writer and follows it to the end as the API shows it', async () => {
    const crc = await connect('crc');
    const started = await call(crc, 'start_qc_run', { projectId: PROJECT, skillId: 'mcp-checks', recordIds: ['S002'] });
    expect(started).toMatchObject({ projectId: PROJECT, skillId: 'mcp-checks', total: 1 });
    const done = await waitFor(async () => {
      const status = await call(crc, 'qc_run_status', { qcRunId: started.id });
      return status.status === 'completed' ? status : undefined;
    }, 'the QC run started over MCP to complete');
    expect(done).toEqual((await rest('crc', 'GET', `/api/iit/qc-runs/${started.id}`)).body);
    const audit = (await rest('pi', 'GET', `/api/iit/projects/${PROJECT}/audit?entityType=qc_run&entityId=${started.id}`)).body.entries;
    expect(audit[0]).toMatchObject({ actor: 'mcp-crc' });
  });

  it('traces each call with a tool span, its user and project, and no identifier value in it', async () => {
    const pi = await connect('pi');
    const before = new Set((await ctx.trace.list(ALL_TRACES, { limit: 500 })).map((t) => t.id));
    const seen = await call(pi, 'list_records', { projectId: PROJECT });
    expect(seen.records.map((r: { data: { phone: string } }) => r.data.phone).sort()).toEqual([...PHONES].sort());
    await call(pi, 'list_queries', { projectId: PROJECT, field: 'phone' });
    await call(pi, 'read_record', { projectId: PROJECT, recordId: 'S001' });
    await call(pi, 'violations_report', { projectId: PROJECT });

    const mine = (await ctx.trace.list(ALL_TRACES, { limit: 500 })).filter((t) => t.kind === 'mcp' && t.userId === userIds.pi && !before.has(t.id));
    expect(mine.map((t) => t.name).sort()).toEqual(['list_queries', 'list_records', 'read_record', 'violations_report']);
    for (const outline of mine) {
      expect(outline).toMatchObject({ projectId: PROJECT, status: 'success' });
      const trace = (await ctx.trace.get(outline.id, ALL_TRACES))!;
      expect(trace.spans).toEqual([expect.objectContaining({ kind: 'tool', name: outline.name, status: 'success', input: { arguments: expect.objectContaining({ projectId: PROJECT }) } })]);
      const text = JSON.stringify(trace);
      for (const phone of PHONES) expect(text, `${outline.name} trace`).not.toContain(phone);
    }
    // The records span still says which rows were read.
    const recordsTrace = (await ctx.trace.get(mine.find((t) => t.name === 'list_records')!.id, ALL_TRACES))!;
    expect(recordsTrace.spans[0]!.output).toEqual({ records: seen.records.map((r: { recordId: string; eventName: string; site: string }) => ({ recordId: r.recordId, eventName: r.eventName, site: r.site })) });
    // The trace's own access rules apply: its user reads it through the API, a user of another trial does not.
    expect((await rest('pi', 'GET', `/api/traces/${recordsTrace.id}`)).status).toBe(200);
    expect((await rest('outsider', 'GET', `/api/traces/${recordsTrace.id}`)).status).toBe(404);

    // The answer text a coordinator sent (which quoted a phone number) is not in the write's trace either.
    const answerTrace = (await ctx.trace.list(ALL_TRACES, { limit: 500 })).find((t) => t.kind === 'mcp' && t.name === 'answer_query' && t.userId === userIds.crc)!;
    const answerText = JSON.stringify(await ctx.trace.get(answerTrace.id, ALL_TRACES));
    expect(answerText).not.toContain(PHONES[0]);
    expect(answerText).toContain(`[withheld: ${ANSWER.length} characters]`);
  });

  it('answers a bad argument with a tool error naming the field and what to send', async () => {
    const viewer = await connect('viewer');
    expect(await refusal(viewer, 'list_queries', { projectId: PROJECT, pageSize: 501 })).toMatch(/^Invalid arguments for list_queries:\npageSize: /);
    expect(await refusal(viewer, 'read_record', { projectId: PROJECT })).toMatch(/^Invalid arguments for read_record:\nrecordId: /);
    expect(await refusal(viewer, 'list_records', { projectId: PROJECT, sort: 'phone' })).toContain('sort');
    expect(await refusal(viewer, 'qc_run_status', { qcRunId: 'not-a-uuid' })).toContain('qcRunId: ');
    const longName = `no_such_tool_${'x'.repeat(5000)}`;
    const unknown = await refusal(viewer, longName, {});
    expect(unknown).toContain(`Unknown tool "${longName.slice(0, 80)}". Available tools: list_projects`);
    expect(unknown.length).toBeLessThan(1000);
    const logic = await refusal(viewer, 'compile_redcap_logic', { logic: '[age] < ' });
    expect(logic).toMatch(/^compile_redcap_logic failed: /);
    expect(logic).not.toMatch(/\/work\/|\/src\/|\bat .*\.ts:\d+/);
    const failed = (await ctx.trace.list(ALL_TRACES, { limit: 500 })).find((t) => t.kind === 'mcp' && t.name === 'list_queries' && t.userId === userIds.viewer && t.status === 'failed');
    expect(failed).toBeDefined();
  });

  it('compiles REDCap logic, computes a sample size as the calculator route does, and gives the SPIRIT checklist of an own protocol only', async () => {
    const viewer = await connect('viewer');
    const logic = "[age] < 18 and [consent] = '1'";
    expect(await call(viewer, 'compile_redcap_logic', { logic })).toEqual({ jsonLogic: compileRedcapLogic(logic), asHardRule: { '!': compileRedcapLogic(logic) } });
    const input = { design: 'two_proportions', alpha: 0.05, power: 0.8, sides: 2, p1: 0.3, p2: 0.5 };
    expect(await call(viewer, 'calculate_sample_size', input)).toEqual((await rest('viewer', 'POST', '/api/tools/sample-size', input)).body);

    const started = await rest('pi', 'POST', '/api/aia/protocol-agent/conversations', { title: 'MCP protocol' });
    expect(started.status).toBe(201);
    const { conversationId } = started.body;
    const patched = await rest('pi', 'PATCH', `/api/aia/protocol-agent/context/${conversationId}`, { field: 'studyDesign', value: { blinding: 'double-blind, placebo-controlled' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const pi = await connect('pi');
    expect((await call(pi, 'list_protocols')).protocols).toEqual((await rest('pi', 'GET', '/api/aia/protocol-agent/conversations')).body.protocols);
    const checklist = await call(pi, 'spirit_checklist', { conversationId });
    expect(checklist).toEqual({ conversationId, title: 'MCP protocol', spirit: patched.body.spirit });
    expect(checklist.spirit.covered.map((item: { id: string }) => item.id)).toContain('24a');

    // Someone else's protocol answers as the API answers them.
    const api = await rest('crc', 'GET', `/api/aia/protocol-agent/checks/${conversationId}`);
    expect(api.status).toBe(404);
    expect(await refusal(await connect('crc'), 'spirit_checklist', { conversationId })).toBe(`spirit_checklist failed: ${api.body.message}`);
  });
});
