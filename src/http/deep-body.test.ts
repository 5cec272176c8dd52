import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH } from '../core/nesting-depth.js';
import { startProbeServer, type ProbeServer } from '../testing/probe-server.js';
import { testEngines } from '../testing/test-database.js';

const ADMIN_TOKEN = 'admin-token-for-deep-body-tests-0123456789';

/** JSON text nested `depth` deep, written as text: JSON.stringify itself overflows the stack on such values. */
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`;
const deepNot = (depth: number) => `${'{"!":'.repeat(depth)}{"var":"age"}${'}'.repeat(depth)}`;
const deepAnd = (depth: number) => `${'{"and":['.repeat(depth)}{"var":"age"}${',true]}'.repeat(depth)}`;
/** A body with one deep part: `deep` is JSON text put in where `DEEP` stands. */
const withDeep = (shape: unknown, deep: string) => JSON.stringify(shape).replace('"DEEP"', deep);

/** A YAML alias bomb ("billion laughs"): nine aliases per level, seven levels. */
const ALIAS_BOMB = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]', ...'bcdefg'.split('').map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefg'[i]}`).join(',')}]`)].join('\n');

const skillYaml = (logic: string) => `id: deep_skill\nname: Deep\nstart_node: check\nnodes:\n  check:\n    type: hard_rule\n    rules:\n      - id: r1\n        field: age\n        message: m\n        logic: ${logic}\n`;

describe.each(testEngines())('deep bodies at the edge (%s)', (engine) => {
  let probe: ProbeServer;
  let conversationId: string;
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

  beforeAll(async () => {
    probe = await startProbeServer(engine, ADMIN_TOKEN);
    const started = await probe.app.inject({ method: 'POST', url: '/api/aia/protocol-agent/conversations', headers, payload: { title: 'Deep' } });
    expect(started.statusCode).toBe(201);
    conversationId = started.json().conversationId;
  });

  afterAll(async () => {
    await probe?.close();
  });

  const send = (method: string, url: string, payload: string) => probe.app.inject({ method: method as 'POST', url, headers, payload });

  function expectDepthRefusal(response: Awaited<ReturnType<typeof send>>, what: string) {
    expect(response.statusCode, `${what}: ${response.body.slice(0, 300)}`).toBe(400);
    expect(response.json().code).toBe('VALIDATION_FAILED');
    expect(response.json().message).toContain(`more than ${MAX_NESTING_DEPTH} levels deep`);
    expect(response.json().details.limit).toBe(MAX_NESTING_DEPTH);
  }

  it('refuses each deep body the reporter sent with 400 naming the limit, never 500', async () => {
    const cases: Array<[string, string, string]> = [
      ['PATCH', `/api/aia/protocol-agent/context/${conversationId}`, withDeep({ field: 'pico', value: 'DEEP' }, deepObject(5000))],
      ['POST', '/api/iit/skills/validate', withDeep({ definition: 'DEEP' }, deepObject(5000))],
      ['POST', '/api/iit/skills/validate', withDeep({ definition: { id: 'deep_skill', name: 'Deep', start_node: 'check', nodes: { check: { type: 'hard_rule', rules: [{ id: 'r1', field: 'age', message: 'm', logic: 'DEEP' }] } } } }, deepAnd(5000))],
      ['POST', '/api/iit/projects/probe/skills/dry-run', withDeep({ definition: { id: 'deep_skill', name: 'Deep', start_node: 'check', nodes: { check: { type: 'hard_rule', rules: [{ id: 'r1', field: 'age', message: 'm', logic: 'DEEP' }] } } } }, deepNot(3000))],
      ['POST', '/api/aia/protocol-agent/action-callback', withDeep({ conversationId, cardId: 'sample_size_calculator', result: 'DEEP' }, deepObject(5000))],
    ];
    for (const [method, url, payload] of cases) expectDepthRefusal(await send(method, url, payload), `${method} ${url}`);
  });

  it('names where the body went too deep', async () => {
    const response = await send('POST', '/api/iit/skills/validate', withDeep({ definition: 'DEEP' }, deepObject(MAX_NESTING_DEPTH)));
    expectDepthRefusal(response, 'one level over');
    expect(response.json().details.field).toMatch(/^body\.definition\.a\.a/);
    // At the limit the body goes through to the route, which judges the definition itself.
    const atLimit = await send('POST', '/api/iit/skills/validate', withDeep({ definition: 'DEEP' }, deepObject(MAX_NESTING_DEPTH - 2)));
    expect(atLimit.statusCode, atLimit.body.slice(0, 300)).toBeLessThan(500);
    expect(atLimit.json().message ?? '').not.toContain('levels deep');
  });

  it('answers a YAML alias bomb and YAML nested too deep as problems of the skill, never 500', async () => {
    const bomb = await send('POST', '/api/iit/skills/validate', JSON.stringify({ yaml: ALIAS_BOMB }));
    expect(bomb.statusCode, bomb.body.slice(0, 300)).toBeLessThan(500);
    expect(bomb.body).toMatch(/aliases/);
    // Saved rather than checked, the same YAML is refused with 400 and the same problem.
    const saved = await send('POST', '/api/iit/skills', JSON.stringify({ yaml: ALIAS_BOMB }));
    expect(saved.statusCode, saved.body.slice(0, 300)).toBe(400);
    expect(saved.json().details.problems[0].message).toMatch(/aliases/);

    for (const logic of [`${'{"and": ['.repeat(5000)}true${']}'.repeat(5000)}`, `${'['.repeat(5000)}1${']'.repeat(5000)}`]) {
      const deep = await send('POST', '/api/iit/skills/validate', JSON.stringify({ yaml: skillYaml(logic) }));
      expect(deep.statusCode, deep.body.slice(0, 300)).toBeLessThan(500);
      expect(deep.body).toMatch(/deep/);
    }
  });

  it('refuses a JSON `file` on the protocol document route with 400: files come as multipart', async () => {
    const response = await send('POST', '/api/iit/projects/probe/protocol-documents', JSON.stringify({ file: {} }));
    expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'file' } });
    expect(response.json().message).toMatch(/multipart/);
  });

  it('refuses a JSON object in the file field of every upload route with 400, never 500', async () => {
    const uploads = probe.app.routeTable.filter((route) => (route.schema as { consumes?: string[] } | undefined)?.consumes?.includes('multipart/form-data'));
    let tried = 0;
    for (const route of uploads) {
      const fileFields = Object.entries((route.schema?.body as { properties?: Record<string, { type?: string }> }).properties ?? {}).filter(([, p]) => p.type === 'object');
      for (const [field] of fileFields) {
        const url = route.url.replace(':projectId', 'probe');
        const response = await send(route.method, url, JSON.stringify({ [field]: {} }));
        expect(response.statusCode, `${route.method} ${url} with {"${field}": {}}: ${response.body.slice(0, 200)}`).toBe(400);
        expect(response.json().details.field).toBe(field);
        tried++;
      }
    }
    // Protocol documents, scenario documents and the five files of a trial import.
    expect(tried).toBeGreaterThanOrEqual(7);
  });
});
