import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../core/audit/audit-log.js';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { listQueries } from '../queries.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';
import { advanceTaskRun, advanceTaskRuns, type SopDeps } from './engine.js';
import { loadSkill, type Skill } from './load-skills.js';
import { createTaskRuns, getTaskRun } from './task-runs.js';

const SKILL = `
id: batch
name: Batch checks
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }
      - { id: sbp-max, field: sbp, logic: { "<=": [{ var: sbp }, 200] }, message: "SBP above 200" }
    on_pass: end_ok
    on_fail: end_flagged
`;

const RECORDS = 120;
/** Every 3rd record is too old, every 5th has a high SBP; some break both. */
const rows = (project: string): TrialRecord[] =>
  Array.from({ length: RECORDS }, (_, i) => ({ recordId: `${project}-${i + 1}`, eventName: 'baseline', site: 'SITE-01', data: { age: i % 3 === 0 ? 90 : 40, sbp: i % 5 === 0 ? 230 : 120 } }));
const expectedQueries = (project: string) => rows(project).flatMap((r) => [...(r.data.age === 90 ? ['age-range'] : []), ...(r.data.sbp === 230 ? ['sbp-max'] : [])].map((rule) => `${r.recordId}:${rule}`)).sort();

/**
 * The batch path of the SOP engine (advanceTaskRuns, which QC batch jobs use): each step of each run saved once, runs
 * another worker took over left alone, and batches racing on the same records raising each finding once.
 */
describe.each(testEngines())('advancing task runs as a batch, on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let sop: SopDeps;
  let skill: Skill;
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-batch-'));

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    writeFileSync(path.join(dir, 'batch.yaml'), SKILL);
    skill = loadSkill(path.join(dir, 'batch.yaml'));
    sop = { ...ctx.trial.sop, skill: () => skill };
    const store = createTrialStore(ctx.db);
    for (const project of ['one', 'stolen', 'race']) {
      await store.ensureProject({ id: project, name: project });
      await store.importRecords(project, rows(project), { actor: 'site' });
    }
  });
  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = (projectId: string, qcRun?: string) =>
    createTaskRuns(ctx.db, { projectId, skillId: 'batch', startNode: 'hard', recordIds: rows(projectId).map((r) => r.recordId), actor: qcRun ?? 'dm' });

  it('saves each node of each run once and opens one query per finding, held until the run ends', async () => {
    const runs = await create('one');
    const { runs: ended, handedBack } = await advanceTaskRuns(sop, runs.map((r) => r.id));
    expect(handedBack).toEqual([]);
    expect(ended).toHaveLength(RECORDS);
    for (const run of await ctx.db.select().from(taskRuns).where(eq(taskRuns.projectId, 'one'))) {
      const flagged = expectedQueries('one').some((key) => key.startsWith(`${run.recordId}:`));
      expect({ status: run.status, nodes: run.steps.map((s) => s.node), lease: run.leaseOwner }).toEqual({ status: 'COMPLETED', nodes: ['hard', flagged ? 'end_flagged' : 'end_ok'], lease: null });
    }
    const queries = await listQueries(ctx.db, { projectId: 'one' });
    expect(queries.map((q) => `${q.recordId}:${q.ruleId}`).sort()).toEqual(expectedQueries('one'));
    // Released when each run ended: the site has them.
    expect(queries.every((q) => q.status === 'open')).toBe(true);
    const trail = await createTrialStore(ctx.db).listAudit('one', { entityType: 'query' });
    expect(trail.filter((e) => e.action === 'opened')).toHaveLength(queries.length);
    expect(trail.filter((e) => e.action === 'released')).toHaveLength(queries.length);
    const steps = await createTrialStore(ctx.db).listAudit('one', { entityType: 'task_run' });
    expect(steps.filter((e) => e.action === 'node:hard:fail' || e.action === 'node:hard:pass')).toHaveLength(RECORDS);
    expect(steps.filter((e) => e.action === 'completed')).toHaveLength(RECORDS);
    // A second pass over the same ids finds nothing to do.
    expect(await advanceTaskRuns(sop, runs.map((r) => r.id))).toEqual({ runs: [], handedBack: [] });
  });

  it('leaves a run another worker took over mid-batch to that worker, and saves the others', async () => {
    const runs = await create('stolen');
    const victim = runs[7]!;
    // The batch starts its trace right after taking its leases and reading its records: the takeover lands then.
    const trace = {
      ...sop.trace,
      start: async (input: Parameters<SopDeps['trace']['start']>[0]) => {
        await ctx.db.update(taskRuns).set({ leaseOwner: 'another-worker' }).where(eq(taskRuns.id, victim.id));
        return sop.trace.start(input);
      },
    } as SopDeps['trace'];
    const result = await advanceTaskRuns({ ...sop, trace }, runs.map((r) => r.id));
    expect(result.runs.map((r) => r.id)).not.toContain(victim.id);
    expect(result.runs).toHaveLength(RECORDS - 1);
    expect(await getTaskRun(ctx.db, victim.id)).toMatchObject({ status: 'RUNNING', currentNode: 'hard', leaseOwner: 'another-worker', steps: [] });
    const victimQueries = await ctx.db.select().from(pendingActions).where(and(eq(pendingActions.projectId, 'stolen'), eq(pendingActions.recordId, victim.recordId)));
    expect(victimQueries).toEqual([]);
  });

  it('runs each run with the skill version it was created with, in a batch and one by one', async () => {
    // Version 1 flags ages above 75; version 2, activated after the runs were created, above 95.
    writeFileSync(path.join(dir, 'v2.yaml'), SKILL.replace('"<=": [{ var: age }, 75]', '"<=": [{ var: age }, 95]'));
    const v2 = loadSkill(path.join(dir, 'v2.yaml'));
    const versioned: SopDeps = { ...sop, skill: (_id, version) => (version === 1 ? skill : v2) };
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'pinned', name: 'pinned' });
    await store.importRecords('pinned', [{ recordId: 'old-1', eventName: 'baseline', site: 'SITE-01', data: { age: 90, sbp: 120 } }, { recordId: 'old-2', eventName: 'baseline', site: 'SITE-01', data: { age: 90, sbp: 120 } }], { actor: 'site' });
    const [inBatch, alone] = await createTaskRuns(ctx.db, { projectId: 'pinned', skillId: 'batch', skillVersion: 1, startNode: 'hard', recordIds: ['old-1', 'old-2'], actor: 'dm' });
    await advanceTaskRuns(versioned, [inBatch!.id]);
    await advanceTaskRun(versioned, alone!.id);
    const queries = await listQueries(ctx.db, { projectId: 'pinned' });
    expect(queries.map((q) => `${q.recordId}:${q.ruleId}`).sort()).toEqual(['old-1:age-range', 'old-2:age-range']);
    // A run created now takes the version active now.
    const [fresh] = await createTaskRuns(ctx.db, { projectId: 'pinned', skillId: 'batch', skillVersion: 2, startNode: 'hard', recordIds: ['old-1'], actor: 'dm' });
    await advanceTaskRuns(versioned, [fresh!.id]);
    expect(await getTaskRun(ctx.db, fresh!.id)).toMatchObject({ status: 'COMPLETED', currentNode: 'end_ok' });
  });

  it('raises each finding once when two batches check the same records at the same time', async () => {
    const first = await create('race', 'qc-a');
    const second = await createTaskRuns(ctx.db, { projectId: 'race', skillId: 'batch', startNode: 'hard', recordIds: rows('race').map((r) => r.recordId).reverse(), actor: 'qc-b' });
    // Not a QC batch each (no qcRunId), so the same record has two runs; both check it at once.
    await Promise.all([advanceTaskRuns(sop, first.map((r) => r.id)), advanceTaskRuns(sop, second.map((r) => r.id))]);
    const queries = await ctx.db.select().from(pendingActions).where(eq(pendingActions.projectId, 'race'));
    expect(queries.map((q) => `${q.recordId}:${q.ruleId}`).sort()).toEqual(expectedQueries('race'));
    const opened = (await createTrialStore(ctx.db).listAudit('race', { entityType: 'query' })).filter((e) => e.action === 'opened');
    expect(opened).toHaveLength(queries.length);
    const chain = await verifyAuditChain(ctx.db, 'race');
    expect(chain.ok).toBe(true);
  });
});
