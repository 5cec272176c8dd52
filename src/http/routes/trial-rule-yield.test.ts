import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as contract from '../../contract/index.js';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { LOW_YIELD } from '../../trial/report/rule-yield.js';
import { buildServer } from '../server.js';

const PROJECT = 'http-rule-yield';

/** GET /rule-yield over HTTP: members read counts (never values), others learn nothing, a bad filter is a 400. */
describe.each(testEngines())('GET /api/iit/projects/:projectId/rule-yield on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  const headers: Record<'viewer' | 'outsider', { authorization: string }> = {} as never;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: PROJECT, name: 'HTTP rule yield' });
    for (const role of ['viewer', 'outsider'] as const) {
      const made = await ctx.users.create({ name: `ry-${role}`, role: role === 'viewer' ? 'viewer' : 'coordinator' });
      if (role === 'viewer') await ctx.users.addMember(PROJECT, made.user.id);
      headers[role] = { authorization: `Bearer ${made.token}` };
    }
    const [run] = await ctx.db.insert(taskRuns).values({ projectId: PROJECT, skillId: 'vitals', recordId: 'R', status: 'COMPLETED', currentNode: 'end' }).returning();
    const query = (recordId: string, status: 'open' | 'closed' | 'cancelled') => ({ projectId: PROJECT, taskRunId: run!.id, recordId, nodeId: 'checks', ruleId: 'age-range', field: 'age', message: 'age out of range', severity: 'error' as const, value: 'secret-value-17', status });
    await ctx.db.insert(pendingActions).values([query('R1', 'open'), query('R2', 'closed'), query('R3', 'cancelled')]);
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const get = (query: string, who: 'viewer' | 'outsider' = 'viewer', projectId = PROJECT) => app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/rule-yield${query}`, headers: headers[who] });

  it('answers a member with the counts per rule in the contract shape, and no value', async () => {
    const response = await get('?skillId=vitals&since=2020-01-01');
    expect(response.statusCode).toBe(200);
    expect(contract.RuleYieldList.parse(response.json())).toEqual({
      rules: [{ skillId: 'vitals', ruleId: 'age-range', field: 'age', raised: 3, open: 1, held: 0, answered: 0, closedWithChange: 0, closedNoChange: 1, closedNoLongerFires: 0, cancelled: 1, yield: 0, lowYield: false }],
      thresholds: LOW_YIELD,
    });
    expect(response.body).not.toContain('secret-value-17');
    expect((await get('?skillId=other')).json()).toEqual({ rules: [], thresholds: LOW_YIELD });
  });

  it('puts the same rows in the JSON violations report', async () => {
    const report = contract.ViolationsReport.parse((await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/report`, headers: headers.viewer })).json());
    expect(report.ruleYield).toEqual((await get('')).json().rules);
  });

  it('answers a non-member exactly as for a project that does not exist', async () => {
    const outsider = await get('', 'outsider');
    const missing = await get('', 'viewer', 'no-such-trial');
    expect(outsider.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    expect(outsider.json().code).toBe('NOT_FOUND');
  });

  it('refuses a since that is not an ISO date, and an unknown parameter, naming them', async () => {
    for (const [query, named] of [['?since=last%20week', 'querystring.since'], ['?since=2025-13-45', 'since'], ['?limit=5', 'limit']] as const) {
      const response = await get(query);
      expect(response.statusCode, query).toBe(400);
      expect(response.json(), query).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining(named) });
    }
  });

});
