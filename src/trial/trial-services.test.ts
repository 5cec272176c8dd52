import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../core/auth/users.js';
import { pendingActions, qcRuns, taskRuns } from '../core/db/schema/trial.js';
import { buildTestContext } from '../testing/test-context.js';
import { listQueries } from './queries.js';
import { createTrialStore } from './store/trial-store.js';
import type { TrialServices } from './trial-services.js';

/**
 * Access is checked in the library, not only by the routes: a CLI command, a job or an agent tool calling trial QC
 * directly gets the same answers as the HTTP API. Non-members learn nothing (NOT_FOUND, as for a missing project,
 * run or query); viewers change nothing (FORBIDDEN).
 */

const PROJECT = 'lib-access';
const MISSING_UUID = '00000000-0000-4000-8000-000000000000';

describe('trial QC checks who is asking', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let trial: TrialServices;
  const as: Record<'pi' | 'coordinator' | 'viewer' | 'outsider', User> = {} as never;
  let qcRunId: string;
  let taskRunId: string;
  let queryId: string;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    trial = ctx.trial;
    for (const role of ['pi', 'coordinator', 'viewer'] as const) as[role] = (await ctx.users.create({ name: `lib-${role}`, role })).user;
    // A coordinator of another project: signed in, with a writer role, but not a member here.
    as.outsider = (await ctx.users.create({ name: 'lib-outsider', role: 'coordinator' })).user;
    await ctx.users.createProject({ id: PROJECT, name: 'Library access' });
    await ctx.users.createProject({ id: 'other-trial', name: 'Other' });
    for (const role of ['pi', 'coordinator', 'viewer'] as const) await ctx.users.addMember(PROJECT, as[role].id);
    await ctx.users.addMember('other-trial', as.outsider.id);

    const store = createTrialStore(ctx.db);
    await store.replaceDictionary(PROJECT, [{ fieldName: 'record_id', formName: 'f', fieldType: 'text', label: 'ID', choices: [], validationMin: null, validationMax: null, required: true }], 'test');
    await store.importRecords(PROJECT, [{ recordId: 'S001', eventName: 'baseline', site: 'SITE-01', data: { record_id: 'S001' } }], { actor: 'test' });
    const [qcRun] = await ctx.db.insert(qcRuns).values({ projectId: PROJECT, skillId: 'test', status: 'running', total: 1, createdBy: 'test' }).returning();
    const [run] = await ctx.db.insert(taskRuns).values({ projectId: PROJECT, qcRunId: qcRun!.id, skillId: 'test', recordId: 'S001', status: 'SUSPENDED', currentNode: 'review' }).returning();
    const [query] = await ctx.db
      .insert(pendingActions)
      .values({ projectId: PROJECT, taskRunId: run!.id, lastTaskRunId: run!.id, recordId: 'S001', eventName: 'baseline', site: 'SITE-01', nodeId: 'checks', ruleId: 'r1', field: 'record_id', message: 'check r1', severity: 'warning', value: 'S001' })
      .returning();
    [qcRunId, taskRunId, queryId] = [qcRun!.id, run!.id, query!.id];
  });

  afterAll(async () => {
    await ctx?.close();
  });

  const reads = (user: User, projectId = PROJECT) => ({
    records: () => trial.records.records(user, projectId),
    record: () => trial.records.record(user, projectId, 'S001'),
    audit: () => trial.records.audit(user, projectId),
    verifyAudit: () => trial.records.verifyAudit(user, projectId),
    redcapSettings: () => trial.redcap.settings(user, projectId),
    qcRuns: () => trial.qc.qcRuns(user, projectId),
    taskRuns: () => trial.qc.taskRuns(user, projectId),
    queries: () => trial.queries.page(user, { projectId }),
    report: () => trial.reports.violations(user, projectId),
    reportCsv: () => trial.reports.violationsCsv(user, projectId),
    reportXlsx: () => trial.reports.violationsXlsx(user, projectId),
  });

  const writes = (user: User) => ({
    importCsv: () => trial.imports.importCsv(user, PROJECT, { dictionaryCsv: 'record_id', recordsCsv: 'record_id' }),
    startQcRun: () => trial.qc.startQcRun(user, PROJECT, 'demo-core-checks'),
    transitionQuery: () => trial.queries.transition(user, PROJECT, queryId, 'answered', 'corrected'),
    bulkCloseQueries: () => trial.queries.bulkClose(user, PROJECT, { queryIds: [queryId], reason: 'duplicate' }),
    review: () => trial.qc.review(user, taskRunId, 'approve', 'fine'),
  });

  it('answers a non-member NOT_FOUND for every read, worded as for a project that does not exist', async () => {
    const missing = reads(as.outsider, 'no-such-trial');
    for (const [name, read] of Object.entries(reads(as.outsider))) {
      const refusal = await read().then(() => undefined, (error: unknown) => error);
      expect(refusal, name).toMatchObject({ code: 'NOT_FOUND', status: 404, details: { projectId: PROJECT } });
      const absent = await missing[name as keyof typeof missing]().then(() => undefined, (error: unknown) => error);
      expect((refusal as Error).message.replace(PROJECT, 'X'), name).toBe((absent as Error).message.replace('no-such-trial', 'X'));
    }
  });

  it("answers a non-member's look at a run of the project exactly as for a run that does not exist", async () => {
    for (const [existing, missing] of [
      [() => trial.qc.qcRun(as.outsider, qcRunId), () => trial.qc.qcRun(as.outsider, MISSING_UUID)],
      [() => trial.qc.taskRun(as.outsider, taskRunId), () => trial.qc.taskRun(as.outsider, MISSING_UUID)],
    ] as const) {
      const refusal = await existing().catch((error: Error) => error);
      const absent = await missing().catch((error: Error) => error);
      expect(refusal).toMatchObject({ code: 'NOT_FOUND' });
      expect((refusal as Error).message.replace(/"[^"]+"/, '"ID"')).toBe((absent as Error).message.replace(/"[^"]+"/, '"ID"'));
    }
  });

  it('refuses every change by a non-member with NOT_FOUND and by a viewer with FORBIDDEN, and changes nothing', async () => {
    for (const [name, write] of Object.entries(writes(as.outsider))) {
      await expect(write(), name).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
    for (const [name, write] of Object.entries(writes(as.viewer))) {
      await expect(write(), name).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403, message: expect.stringContaining('Your role "viewer" can only read in project'), details: { role: 'viewer' } });
    }
    const [query] = await listQueries(ctx.db, { projectId: PROJECT, recordId: 'S001' });
    expect(query).toMatchObject({ id: queryId, status: 'open' });
    expect((await trial.qc.taskRun(as.pi, taskRunId)).status).toBe('SUSPENDED');
  });

  it('keeps the REDCap binding and identifier access to admins, and REDCap syncs to the PI', async () => {
    for (const member of [as.coordinator, as.pi]) {
      await expect(trial.redcap.configure(member, PROJECT, { apiUrl: 'https://redcap.example.org/api/', tokenEnv: 'REDCAP_TOKEN_LIB' })).rejects.toMatchObject({ code: 'FORBIDDEN', details: { needs: ['admin'] } });
    }
    await expect(trial.redcap.sync(as.viewer, PROJECT)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(trial.redcap.configure(as.outsider, PROJECT, {})).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(trial.records.setIdentifierAccess(as.pi, PROJECT, as.viewer.id, true)).rejects.toMatchObject({ code: 'FORBIDDEN', details: { needs: ['admin'] } });
  });

  it('offers each role only the query moves it may make, on the record page and the review queue as on the query list', async () => {
    const offered = async (user: User) => {
      const [listed] = (await trial.queries.page(user, { projectId: PROJECT })).queries;
      const [onRecord] = (await trial.records.record(user, PROJECT, 'S001')).queries;
      const run = (await trial.qc.taskRunPage(user, { projectId: PROJECT })).taskRuns.find((r) => r.id === taskRunId);
      return [listed, onRecord, run?.findings[0]].map((query) => query?.allowedTransitions);
    };
    // The query is open: the site answers it, data management closes it, a viewer does neither.
    expect(await offered(as.coordinator)).toEqual([['answered'], ['answered'], ['answered']]);
    expect(await offered(as.viewer)).toEqual([[], [], []]);
    expect(await offered(as.pi)).toEqual([['answered', 'closed'], ['answered', 'closed'], ['answered', 'closed']]);
  });

  it('lets members read and a coordinator change the data, recorded under their name', async () => {
    for (const [name, read] of Object.entries(reads(as.viewer))) await expect(read(), name).resolves.toBeDefined();
    const answered = await trial.queries.transition(as.coordinator, PROJECT, queryId, 'answered', 'corrected at site');
    expect(answered).toMatchObject({ status: 'answered' });
    const trail = await trial.records.audit(as.viewer, PROJECT, { entityType: 'query', entityId: queryId });
    expect(trail.map((entry) => [entry.action, entry.actor])).toContainEqual(['status:answered', 'lib-coordinator']);
    // Past the access check, a coordinator's import is judged on its files.
    await expect(trial.imports.importCsv(as.coordinator, PROJECT, { dictionaryCsv: '', recordsCsv: '' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
