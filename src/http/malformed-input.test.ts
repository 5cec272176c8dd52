import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH } from '../core/nesting-depth.js';
import { startProbeServer, type ProbeServer } from '../testing/probe-server.js';
import { testEngines } from '../testing/test-database.js';
import { buildServer, type RouteInfo } from './server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

const ADMIN_TOKEN = 'admin-token-for-malformed-tests-0123456789';

/** Ids a client might send by mistake or on purpose; none may crash a route. */
const MALFORMED_IDS = [
  'not-a-uuid',
  // Passes a loose /^[0-9a-f-]{36}$/ check, yet PostgreSQL refuses it as a uuid.
  '-'.repeat(36),
  '00000000-0000-4000-8000-00000000000g',
  'urn:uuid:00000000-0000-4000-8000-000000000000',
  "'; drop table users; --",
  '%00',
  'a%00b',
  '%E2%80%AE',
  'x'.repeat(2000),
  // Well formed and unknown: not found, not a crash.
  '00000000-0000-4000-8000-000000000000',
];

/** Filters that compare with uuid columns. */
const MALFORMED_QUERIES = ['qcRunId=abc', 'taskRunId=abc', 'qcRunId=' + '-'.repeat(36), 'status=%00', 'limit=abc', 'limit=-1', 'offset=1e99', 'format=%00'];

/**
 * 5xx answers a client may legitimately get: a store or model this server does not have (the test
 * PostgreSQL has no pgvector). Anything else of 500 and above is a crash.
 */
const UNAVAILABLE = new Set(['VECTOR_STORE_UNAVAILABLE', 'LLM_NOT_CONFIGURED']);

const fill = (url: string, value: string) => url.replace(/:(\w+)/g, () => (value.includes('%') ? value : encodeURIComponent(value)));

describe.each(testEngines())('malformed ids, filters and NUL bytes on every route (%s)', (engine) => {
  let probe: ProbeServer;
  let ctx: ProbeServer['ctx'];
  let app: Server;
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    // A real project ("probe"), so project-scoped routes get past the membership check and reach their id lookups.
    probe = await startProbeServer(engine, ADMIN_TOKEN);
    ({ ctx, app } = probe);
  });

  afterAll(async () => {
    await probe?.close();
  });

  const send = (route: RouteInfo, url: string, payload?: unknown) =>
    app.inject({ method: route.method as 'GET', url, headers, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: (payload ?? {}) as object }) });

  function expectNoCrash(response: Awaited<ReturnType<Server['inject']>>, what: string) {
    const body = response.headers['content-type']?.toString().includes('json') ? response.json() : {};
    const crashed = response.statusCode >= 500 && !UNAVAILABLE.has(body.code);
    expect(crashed, `${what} answered ${response.statusCode}: ${response.body.slice(0, 300)}`).toBe(false);
  }

  it('answers 4xx, never a crash, for malformed ids in every path parameter', async () => {
    const withParams = app.routeTable.filter((r) => r.url.includes(':'));
    expect(withParams.length).toBeGreaterThan(10);
    for (const route of withParams) {
      for (const id of MALFORMED_IDS) {
        // Keep the project real where a route has one, so the id after it is what gets tested.
        const url = fill(route.url.replace(':projectId', 'probe'), id);
        expectNoCrash(await send(route, url), `${route.method} ${url.slice(0, 120)}`);
        if (route.url.includes(':projectId')) {
          const bothBad = fill(route.url, id);
          expectNoCrash(await send(route, bothBad), `${route.method} ${bothBad.slice(0, 120)}`);
        }
      }
    }
  });

  it('answers 4xx, never a crash, for malformed filters on every route', async () => {
    for (const route of app.routeTable) {
      for (const query of MALFORMED_QUERIES) {
        const url = `${fill(route.url.replace(':projectId', 'probe'), '00000000-0000-4000-8000-000000000000')}?${query}`;
        expectNoCrash(await send(route, url), `${route.method} ${url}`);
      }
    }
  });

  it('refuses a NUL byte in any path parameter, query value or body field with 400 naming where it is', async () => {
    for (const route of app.routeTable) {
      const base = fill(route.url.replace(':projectId', 'probe'), '00000000-0000-4000-8000-000000000000');
      const inQuery = await send(route, `${base}?probe=a%00b`);
      expect(inQuery.statusCode, `${route.method} ${route.url} with a NUL in the query`).toBe(400);
      expect(inQuery.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'querystring.probe' } });
      expect(inQuery.json().message).toMatch(/querystring\.probe contains a NUL character .* Remove it/);

      if (route.url.includes(':')) {
        const inPath = await send(route, fill(route.url, 'a%00b'));
        expect(inPath.statusCode, `${route.method} ${route.url} with a NUL in the path`).toBe(400);
        expect(inPath.json().details.field).toMatch(/^params\./);
      }
      if (route.method !== 'GET' && route.method !== 'DELETE') {
        const inBody = await send(route, base, { probe: { nested: ['ok', 'a\u0000b'] } });
        expect(inBody.statusCode, `${route.method} ${route.url} with a NUL in the body`).toBe(400);
        expect(inBody.json().details).toEqual({ field: 'body.probe.nested[1]' });
      }
    }
  });

  it('refuses a body nested deeper than the limit on every route that takes one with 400 naming the limit', async () => {
    // Written as text: JSON.stringify of a value 5 000 deep overflows the stack itself.
    const deep = `{"probe":${'{"a":['.repeat(5000)}1${']}'.repeat(5000)}}`;
    const withBodies = app.routeTable.filter((r) => r.method === 'POST' || r.method === 'PATCH' || r.method === 'PUT');
    expect(withBodies.length).toBeGreaterThan(20);
    for (const route of withBodies) {
      const url = fill(route.url.replace(':projectId', 'probe'), '00000000-0000-4000-8000-000000000000');
      const response = await app.inject({ method: route.method as 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: deep });
      expectNoCrash(response, `${route.method} ${url} with a body 10 000 levels deep`);
      expect(response.statusCode, `${route.method} ${url}: ${response.body.slice(0, 200)}`).toBe(400);
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { limit: MAX_NESTING_DEPTH } });
    }
  });

  it('answers 404 for an unknown but well-formed query id on a query transition', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/iit/projects/probe/queries/00000000-0000-4000-8000-000000000000/transition', headers, payload: { to: 'closed' } });

    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('NOT_FOUND');
  });

  it('answers 400 naming the parameter for a malformed uuid filter', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/iit/projects/probe/task-runs?qcRunId=abc', headers });

    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('querystring.qcRunId: must be a UUID');
  });
});
