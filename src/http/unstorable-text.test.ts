import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../core/db/connect.js';
import { startProbeServer, type ProbeServer } from '../testing/probe-server.js';
import { testEngines } from '../testing/test-database.js';
import { buildServer } from './server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

const ADMIN_TOKEN = 'admin-token-for-unstorable-text-0123456789';

/**
 * A lone surrogate as a client sends it: JSON text with the escape `\ud800` and no low surrogate after it.
 * JSON.parse accepts it; PostgreSQL refuses it in jsonb (the audit entry), which answered 500.
 */
const LONE = String.raw`a \ud800`;

/** The routes the security review found answering 500, each with the field that carried the surrogate. */
const ROUTES: Array<{ method: 'POST' | 'PUT'; url: string; body: string; field: string }> = [
  { method: 'PUT', url: '/api/profile', body: `{"roleTitle":"${LONE}"}`, field: 'body.roleTitle' },
  { method: 'POST', url: '/api/iit/projects/probe/chat', body: `{"message":"${LONE}"}`, field: 'body.message' },
  { method: 'POST', url: '/api/iit/projects/probe/chat/stream', body: `{"message":"${LONE}"}`, field: 'body.message' },
  { method: 'POST', url: '/api/agent/run', body: `{"scenarioId":"protocol-qa","input":"${LONE}"}`, field: 'body.input' },
  { method: 'POST', url: '/api/agent/run/stream', body: `{"scenarioId":"protocol-qa","input":"${LONE}"}`, field: 'body.input' },
  { method: 'PUT', url: '/api/iit/projects/probe/memory', body: `{"content":"## Preferences\\n- ${LONE}"}`, field: 'body.content' },
  { method: 'POST', url: '/api/iit/projects/probe/memory/facts', body: `{"facts":[{"section":"preferences","text":"${LONE}"}]}`, field: 'body.facts[0].text' },
  { method: 'PUT', url: '/api/iit/projects/probe/redcap', body: `{"apiUrl":"https://redcap.example.org/api/${LONE}","tokenEnv":"REDCAP_TOKEN_PROBE"}`, field: 'body.apiUrl' },
  { method: 'POST', url: '/api/iit/projects/probe/protocol-documents', body: `{"sourceFile":"${LONE}.md","text":"Inclusion criteria: adults."}`, field: 'body.sourceFile' },
  { method: 'POST', url: '/api/users', body: `{"name":"${LONE}","role":"viewer"}`, field: 'body.name' },
  { method: 'POST', url: '/api/projects', body: `{"id":"surrogate","name":"${LONE}"}`, field: 'body.name' },
  { method: 'POST', url: '/api/users/:adminId/tokens', body: `{"label":"${LONE}"}`, field: 'body.label' },
];

describe.each(testEngines())('a lone unicode surrogate in a request (%s)', (engine) => {
  let probe: ProbeServer;
  let ctx: ProbeServer['ctx'];
  let app: Server;
  let adminId: string;
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

  beforeAll(async () => {
    probe = await startProbeServer(engine, ADMIN_TOKEN);
    ({ ctx, app } = probe);
    adminId = (await ctx.users.findByToken(ADMIN_TOKEN))!.id;
  });

  afterAll(async () => {
    await probe?.close();
  });

  /** Rows in every table of the application schema: a refused request must leave each count as it was. */
  async function rowCounts(): Promise<Record<string, number>> {
    const tables = await queryRows<{ name: string }>(ctx.db, sql`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`);
    const counts: Record<string, number> = {};
    for (const { name } of tables) {
      const [row] = await queryRows<{ n: number }>(ctx.db, sql`select count(*)::int as n from ${sql.identifier(name)}`);
      counts[name] = row!.n;
    }
    return counts;
  }

  it.each(ROUTES)('refuses it in $method $url with 400 naming $field, and stores nothing', async ({ method, url, body, field }) => {
    const before = await rowCounts();

    const response = await app.inject({ method, url: url.replace(':adminId', adminId), headers, payload: body });

    expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
    expect(response.json().message).toContain(`${field} contains a lone UTF-16 surrogate`);
    expect(await rowCounts()).toEqual(before);
  });

  it('leaves no conversation behind when a chat message is refused', async () => {
    await app.inject({ method: 'POST', url: '/api/iit/projects/probe/chat', headers, payload: `{"message":"${LONE}"}` });

    const list = await app.inject({ method: 'GET', url: '/api/conversations', headers });
    expect(list.json().conversations).toEqual([]);
  });

  it('refuses a lone low surrogate, and one in an object key, on any route with a body', async () => {
    for (const route of app.routeTable.filter((r) => r.method !== 'GET' && r.method !== 'DELETE')) {
      const url = route.url.replace(':projectId', 'probe').replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      const inValue = await app.inject({ method: route.method as 'POST', url, headers, payload: String.raw`{"probe":{"nested":["ok","\udc00 b"]}}` });
      expect(inValue.statusCode, `${route.method} ${route.url}`).toBe(400);
      expect(inValue.json().details).toEqual({ field: 'body.probe.nested[1]' });
      const inKey = await app.inject({ method: route.method as 'POST', url, headers, payload: String.raw`{"x\ud83d":1}` });
      expect(inKey.statusCode, `${route.method} ${route.url}`).toBe(400);
      expect(inKey.json().details.field).toMatch(/^body\.x/);
    }
  });

  it('accepts a well-formed pair: an emoji is text like any other', async () => {
    const response = await app.inject({ method: 'PUT', url: '/api/profile', headers, payload: String.raw`{"roleTitle":"PI \ud83d\ude00"}` });

    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().roleTitle).toBe('PI 😀');
  });
});
