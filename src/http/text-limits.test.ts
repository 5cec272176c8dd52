import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../core/db/connect.js';
import { multipartBody } from '../testing/multipart.js';
import { startProbeServer, type ProbeServer } from '../testing/probe-server.js';
import { testEngines } from '../testing/test-database.js';
import { buildServer } from './server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

const ADMIN_TOKEN = 'admin-token-for-text-limit-tests-0123456789';
const MEGABYTE = 'x'.repeat(1024 * 1024);
/** Long enough to be refused, short enough for a real request line (query strings travel in the URL). */
const LONG_QUERY = 'x'.repeat(3000);

/** A request carrying one over-long value, the field it is in and the limit the 400 must name. */
const OVERSIZED: Array<{ method: 'GET' | 'POST'; url: string; body?: object; field: string; limit: number }> = [
  { method: 'POST', url: '/api/projects', body: { id: 'big-name', name: MEGABYTE }, field: 'body.name', limit: 200 },
  { method: 'POST', url: '/api/projects/probe/members', body: { userId: MEGABYTE }, field: 'body.userId', limit: 100 },
  { method: 'POST', url: '/api/auth/login', body: { code: MEGABYTE }, field: 'body.code', limit: 200 },
  { method: 'POST', url: '/api/agent/run', body: { scenarioId: MEGABYTE, input: 'hello' }, field: 'body.scenarioId', limit: 100 },
  { method: 'POST', url: '/api/agent/run', body: { scenarioId: 'protocol-qa', input: 'hello', options: { documentIds: [MEGABYTE] } }, field: 'body.options.documentIds.0', limit: 128 },
  { method: 'POST', url: '/api/rag/documents', body: { scenarioId: MEGABYTE, sourceFile: 'a.md', text: 'hello' }, field: 'body.scenarioId', limit: 100 },
  { method: 'POST', url: '/api/iit/projects/probe/qc-runs', body: { skillId: MEGABYTE }, field: 'body.skillId', limit: 100 },
  { method: 'POST', url: '/api/iit/projects/probe/qc-runs', body: { skillId: 'demo-core-checks', recordIds: ['S001', MEGABYTE] }, field: 'body.recordIds.1', limit: 100 },
  { method: 'GET', url: `/api/rag/documents?scenarioId=${LONG_QUERY}`, field: 'querystring.scenarioId', limit: 200 },
  { method: 'GET', url: `/api/iit/projects/probe/records?site=${LONG_QUERY}`, field: 'querystring.site', limit: 200 },
  { method: 'GET', url: `/api/iit/projects/probe/audit?entityId=${LONG_QUERY}`, field: 'querystring.entityId', limit: 200 },
  { method: 'GET', url: `/api/iit/projects/probe/queries?recordId=${LONG_QUERY}`, field: 'querystring.recordId', limit: 200 },
  { method: 'GET', url: `/api/iit/projects/probe/queries?site=${LONG_QUERY}`, field: 'querystring.site', limit: 200 },
  { method: 'GET', url: `/api/iit/projects/probe/queries?field=${LONG_QUERY}`, field: 'querystring.field', limit: 200 },
];

const DICTIONARY_HEADER = 'Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?';
const DICTIONARY = `${DICTIONARY_HEADER}\nrecord_id,baseline,,text,Subject ID,,,,,,,,\nsbp,baseline,,text,Systolic BP,,,integer,,,,,\n`;

describe.each(testEngines())('limits on text the API stores and echoes (%s)', (engine) => {
  let probe: ProbeServer;
  let ctx: ProbeServer['ctx'];
  let app: Server;
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    probe = await startProbeServer(engine, ADMIN_TOKEN);
    ({ ctx, app } = probe);
  });

  afterAll(async () => {
    await probe?.close();
  });

  const rowCount = async (table: string) => (await queryRows<{ n: number }>(ctx.db, sql`select count(*)::int as n from ${sql.identifier(table)}`))[0]!.n;

  it.each(OVERSIZED)('refuses an over-long $field in $method with 400 naming the field and its limit, without echoing it', async ({ method, url, body, field, limit }) => {
    const response = await app.inject({ method, url, headers, ...(body ? { payload: body } : {}) });

    expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
    expect(response.json().code).toBe('VALIDATION_FAILED');
    expect(response.json().message).toContain(`${field}: must NOT have more than ${limit} characters`);
    expect(response.body.length).toBeLessThan(2000);
  });

  it('names an unknown field with a megabyte-long name in a short answer', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/projects', headers, payload: { id: 'odd-key', name: 'Odd', [MEGABYTE]: 1 } });

    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain(`body.${'x'.repeat(60)}…: is not a known field; remove it`);
    expect(response.body.length).toBeLessThan(2000);
  });

  it('lists the first 50 schema problems of a body with 100 000 bad items and says how many more, in a short answer', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/iit/projects/probe/qc-runs', headers, payload: { skillId: 'demo-core-checks', recordIds: Array.from({ length: 100_000 }, () => '') } });

    expect(response.statusCode).toBe(400);
    expect(response.body.length).toBeLessThan(64 * 1024);
    const body = response.json();
    expect(body.details.problems).toHaveLength(50);
    expect(body.details.problems[0]).toBe('body.recordIds.0: must NOT have fewer than 1 characters');
    expect(body.details.problemCount).toBe(100_000);
    expect(body.message).toMatch(/\n- \.\.\. and 99950 more$/);
  });

  it('stores a project name of 200 characters and refuses one of 201, storing nothing', async () => {
    const projectsBefore = await rowCount('projects');

    const refused = await app.inject({ method: 'POST', url: '/api/projects', headers, payload: { id: 'long-name', name: 'n'.repeat(201) } });
    expect(refused.statusCode).toBe(400);
    expect(await rowCount('projects')).toBe(projectsBefore);

    const created = await app.inject({ method: 'POST', url: '/api/projects', headers, payload: { id: 'long-name', name: 'n'.repeat(200) } });
    expect(created.statusCode, created.body).toBe(201);
    expect(await rowCount('projects')).toBe(projectsBefore + 1);
  });

  it('answers a records file with 200 000 unknown columns with a short error saying how many more problems there are', async () => {
    const columns = Array.from({ length: 200_000 }, (_, i) => `c${i}`).join(',');
    const upload = multipartBody({ files: { dictionary: { name: 'dictionary.csv', content: DICTIONARY }, records: { name: 'records.csv', content: `record_id,${columns}\n` } } });

    const response = await app.inject({ method: 'POST', url: '/api/iit/projects/probe/imports', headers: { ...headers, ...upload.headers }, payload: upload.payload });

    expect(response.statusCode).toBe(422);
    expect(response.body.length).toBeLessThan(64 * 1024);
    const body = response.json();
    expect(body).toMatchObject({ code: 'IMPORT_INVALID', details: { problemCount: 200_000, moreProblems: 199_950 } });
    expect(body.details.problems).toHaveLength(50);
    expect(body.message).toContain('... and 199980 more (details.problems lists the first 50)');
  });

  it('answers a NUL in a dictionary label with 400 naming file, line and column, and imports nothing', async () => {
    const withNul = DICTIONARY.replace('Systolic BP', 'Systolic\u0000BP');
    const upload = multipartBody({ files: { dictionary: { name: 'dictionary.csv', content: withNul }, records: { name: 'records.csv', content: 'record_id,sbp\nS001,120\n' } } });

    const response = await app.inject({ method: 'POST', url: '/api/iit/projects/probe/imports', headers: { ...headers, ...upload.headers }, payload: upload.payload });

    expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { source: 'dictionary.csv', problems: [{ line: 3, field: 'Field Label' }] } });
    expect(response.json().message).toContain('dictionary.csv line 3, column Field Label: contains a NUL character');
    expect(await rowCount('trial_fields')).toBe(0);
    expect(await rowCount('trial_records')).toBe(0);
  });
});
