import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../core/db/connect.js';
import { pendingActions } from '../../core/db/schema/trial.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { getQcProgress, listTaskRuns, startQcRun } from '../qc/qc-runs.js';
import { reviewTaskRun } from '../qc/workers.js';
import { listQueries, transitionQuery } from '../queries.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';
import { advanceTaskRun, advanceTaskRuns, type SopDeps } from './engine.js';
import { loadSkill, type Skill } from './load-skills.js';
import { createTaskRuns, getTaskRun } from './task-runs.js';
import { hardRuleSkillYaml } from '../../testing/skill-yaml.js';

const AGE = (max: number) => `{ id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, ${max}] }] }, message: "Age must be 18-${max}" }`;
const SBP = `{ id: sbp-max, field: sbp, logic: { "<=": [{ var: sbp }, 200] }, message: "SBP above 200" }`;


const row = (recordId: string, data: Record<string, unknown>): TrialRecord => ({ recordId, eventName: 'baseline', site: 'SITE-01', data: { record_id: recordId, ...data } });

/**
 * Issue 25: a rule that is fixed or removed must not leave its old queries open and its review items queued. A
 * re-run of a skill on a record closes the queries of that skill whose rule did not fire this time, as "no longer
 * fires" (audited, naming the run), and withdraws a review left about nothing, without a notice.
 */
// Each case runs with the runs advanced one by one (advanceTaskRun) and together (advanceTaskRuns, as QC batch jobs
// are): the set-wise writes of a batch must leave the same queries, reviews and audit trail.
describe.each(testEngines().flatMap((engine) => [[engine, 'one by one'], [engine, 'as one batch']] as const))('queries that no longer fire, on %s, runs advanced %s', (engine, mode) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let sop: SopDeps;
  let model: ScriptedModel;
  /** What the model answers a soft rule now. */
  let verdict = 'not a verdict';
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-no-longer-fires-'));
  /** The skill each id resolves to now: a test swaps in a fixed or reduced version, as an edit would. */
  const current = new Map<string, Skill>();
  const notices: string[] = [];
  const noJobs = { sendMany: async () => undefined } as unknown as Jobs;

  function useSkill(id: string, rules: string[], review = false): Skill {
    const file = path.join(dir, `${id}-${current.size}-${Date.now()}.yaml`);
    writeFileSync(file, hardRuleSkillYaml(id, rules, review));
    const skill = loadSkill(file);
    current.set(id, skill);
    return skill;
  }

  /** A skill of one soft rule on ae_text (the model reads the whole record), set as the current version of `id`. */
  function useSoftSkill(id: string, instruction: string): void {
    const file = path.join(dir, `${id}.yaml`);
    writeFileSync(file, `
id: ${id}
name: ${id}
start_node: soft
nodes:
  soft:
    type: soft_instruction
    instruction: ${instruction}
    field: ae_text
    max_retries: 1
    on_pass: end_ok
    on_fail: end_flagged
`);
    current.set(id, loadSkill(file));
  }

  /** One run of a skill on records, advanced here rather than by workers, so a test decides what runs when. */
  async function run(skillId: string, recordIds: string[]) {
    const skill = current.get(skillId)!;
    const runs = await createTaskRuns(ctx.db, { projectId: 'nf', skillId, startNode: skill.startNode, recordIds, actor: 'dm' });
    if (mode === 'one by one') return Promise.all(runs.map((r) => advanceTaskRun(sop, r.id)));
    // A batch hands a run at a soft rule back to be advanced on its own, as a worker then does.
    const { handedBack } = await advanceTaskRuns(sop, runs.map((r) => r.id));
    for (const id of handedBack) await advanceTaskRun(sop, id);
    return Promise.all(runs.map((r) => getTaskRun(ctx.db, r.id)));
  }

  const import_ = (rows: TrialRecord[]) => createTrialStore(ctx.db).importRecords('nf', rows, { actor: 'site' });
  const queriesOf = (recordId: string) => listQueries(ctx.db, { projectId: 'nf', recordId });
  const trailOf = (entityType: 'query' | 'task_run', entityId: string) => createTrialStore(ctx.db).listAudit('nf', { entityType, entityId });

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: () => ({ reply: verdict }) });
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL });
    sop = {
      ...ctx.trial.sop,
      skill: (id) => current.get(id)!,
      notifier: { configured: true, notify: async () => ({ delivered: true }) },
      queueReviewNotice: async (taskRunId) => void notices.push(taskRunId),
    };
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'nf', name: 'No longer fires' });
    await store.replaceDictionary('nf', ['record_id', 'age', 'sbp', 'ae_text'].map((fieldName) => ({ fieldName, formName: 'f', fieldType: ['record_id', 'ae_text'].includes(fieldName) ? 'text' : 'integer', label: fieldName, choices: [], validationMin: null, validationMax: null, required: false })), 'test');
    await store.replaceEvents('nf', [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes a query once the data no longer breaks the rule, audited as the system naming the run', async () => {
    useSkill('vitals', [AGE(75), SBP]);
    await import_([row('A1', { age: 15, sbp: 120 })]);
    await run('vitals', ['A1']);
    const [opened] = await queriesOf('A1');
    expect(opened).toMatchObject({ ruleId: 'age-range', status: 'open', value: 15 });

    await import_([row('A1', { age: 30, sbp: 120 })]);
    const [rerun] = await run('vitals', ['A1']);
    const [closed] = await queriesOf('A1');
    expect(closed).toMatchObject({ id: opened!.id, status: 'closed', noLongerFires: { taskRunId: rerun!.id } });
    const trail = await trailOf('query', opened!.id);
    expect(trail.map((e) => e.action)).toEqual(['opened', 'released', 'status:closed']);
    expect(trail.at(-1)).toMatchObject({ actor: 'system', oldValue: { status: 'open' }, newValue: { status: 'closed' } });
    expect(trail.at(-1)!.reason).toBe(`no longer fires as of task run ${rerun!.id}`);
  });

  it('closes the queries of a fixed rule and of a removed one, answered ones included, and only those', async () => {
    useSkill('vitals', [AGE(75), SBP]);
    useSkill('other', [`{ id: sbp-other, field: sbp, logic: { "<=": [{ var: sbp }, 180] }, message: "SBP above 180" }`]);
    await import_([row('B1', { age: 80, sbp: 210 })]);
    await run('vitals', ['B1']);
    await run('other', ['B1']);
    const before = await queriesOf('B1');
    expect(before.map((q) => [q.ruleId, q.status]).sort()).toEqual([['age-range', 'open'], ['sbp-max', 'open'], ['sbp-other', 'open']]);
    const sbp = before.find((q) => q.ruleId === 'sbp-max')!;
    await transitionQuery(ctx.db, { projectId: 'nf', queryId: sbp.id, to: 'answered', actor: 'site', comment: 'measured twice' });

    // The age rule was written too strictly (the protocol allows 85) and the SBP rule moved to another skill.
    useSkill('vitals', [AGE(85)]);
    await run('vitals', ['B1']);
    const after = new Map((await queriesOf('B1')).map((q) => [q.ruleId, q]));
    expect(after.get('age-range')).toMatchObject({ status: 'closed' });
    expect(after.get('sbp-max')).toMatchObject({ id: sbp.id, status: 'closed' });
    expect((await trailOf('query', sbp.id)).at(-1)).toMatchObject({ action: 'status:closed', oldValue: { status: 'answered' } });
    // Another skill's query on the same record, about a rule this skill never had, is left alone.
    expect(after.get('sbp-other')).toMatchObject({ status: 'open', noLongerFires: null });
  });

  it('closes a query an earlier version stored under another event, and keeps the one under the current key', async () => {
    useSkill('vitals', [AGE(75), SBP]);
    await import_([row('C1', { age: 15, sbp: 120 })]);
    const [earlier] = await createTaskRuns(ctx.db, { projectId: 'nf', skillId: 'vitals', startNode: 'hard', recordIds: ['C1'], actor: 'dm' });
    // As versions before issue 25 stored a first-visit field of a longitudinal trial: without its event.
    const [wrong] = await (ctx.db as Db)
      .insert(pendingActions)
      .values({ projectId: 'nf', taskRunId: earlier!.id, lastTaskRunId: earlier!.id, recordId: 'C1', eventName: '', site: 'SITE-01', nodeId: 'hard', ruleId: 'age-range', field: 'age', message: 'Age must be 18-75', severity: 'error', value: 15 })
      .returning();

    const [rerun] = await run('vitals', ['C1']);
    const queries = await queriesOf('C1');
    expect(queries).toHaveLength(2);
    expect(queries.find((q) => q.id === wrong!.id)).toMatchObject({ eventName: '', status: 'closed', noLongerFires: { taskRunId: rerun!.id } });
    expect(queries.find((q) => q.id !== wrong!.id)).toMatchObject({ eventName: 'baseline', ruleId: 'age-range', status: 'open', value: 15 });
  });

  it('leaves a query a person closed as it is', async () => {
    useSkill('vitals', [AGE(75), SBP]);
    await import_([row('D1', { age: 15, sbp: 120 })]);
    await run('vitals', ['D1']);
    const [query] = await queriesOf('D1');
    await transitionQuery(ctx.db, { projectId: 'nf', queryId: query!.id, to: 'closed', actor: 'dm', comment: 'confirmed with the site' });
    await import_([row('D1', { age: 30, sbp: 120 })]);
    await run('vitals', ['D1']);
    const trail = await trailOf('query', query!.id);
    expect(trail.map((e) => [e.action, e.actor])).toEqual([['opened', 'sop:vitals'], ['released', 'sop:vitals'], ['status:closed', 'dm']]);
  });

  it('withdraws a review whose finding no longer fires: its query cancelled, its run ended, its batch completed, no notice', async () => {
    useSkill('reviewed', [AGE(75)], true);
    await import_([row('E1', { age: 15 })]);
    const batch = await startQcRun({ db: ctx.db, jobs: noJobs }, { projectId: 'nf', skill: current.get('reviewed')!, recordIds: ['E1'], actor: 'dm' });
    const [waiting] = await listTaskRuns(ctx.db, { projectId: 'nf', qcRunId: batch.id });
    await advanceTaskRun(sop, waiting!.id);
    expect((await getTaskRun(ctx.db, waiting!.id))!.status).toBe('SUSPENDED');
    expect(notices).toEqual([waiting!.id]);
    const [held] = await queriesOf('E1');
    expect(held).toMatchObject({ status: 'held', heldByTaskRunId: waiting!.id });

    await import_([row('E1', { age: 30 })]);
    const [rerun] = await run('reviewed', ['E1']);
    expect(rerun).toMatchObject({ status: 'COMPLETED', currentNode: 'end_ok' });
    const [withdrawn] = await queriesOf('E1');
    expect(withdrawn).toMatchObject({ id: held!.id, status: 'cancelled', heldByTaskRunId: null });
    expect((await trailOf('query', held!.id)).at(-1)!.reason).toMatch(/no longer fires as of task run .*withdrawn before it reached the site/);

    const ended = await getTaskRun(ctx.db, waiting!.id);
    expect(ended).toMatchObject({ status: 'CANCELLED' });
    const runTrail = await trailOf('task_run', waiting!.id);
    expect(runTrail.at(-1)).toMatchObject({ action: 'cancelled', actor: 'system', newValue: { status: 'CANCELLED' } });
    expect(runTrail.at(-1)!.reason).toContain(`task run ${rerun!.id} checked record E1 again`);
    expect(notices).toEqual([waiting!.id]);
    expect(await getQcProgress(ctx.db, batch.id)).toMatchObject({ status: 'completed', done: 1, total: 1 });
  });

  it('keeps the review of a query that still fires, one per record: the newer run takes it over (issue 32)', async () => {
    useSkill('reviewed', [AGE(75), SBP], true);
    await import_([row('F1', { age: 15, sbp: 250 })]);
    const [first] = await run('reviewed', ['F1']);
    expect(first!.status).toBe('SUSPENDED');
    await import_([row('F1', { age: 30, sbp: 250 })]);
    const [second] = await run('reviewed', ['F1']);
    expect(second!.status).toBe('SUSPENDED');
    const byRule = new Map((await queriesOf('F1')).map((q) => [q.ruleId, q]));
    expect(byRule.get('age-range')).toMatchObject({ status: 'cancelled' });
    expect(byRule.get('sbp-max')).toMatchObject({ status: 'held', heldByTaskRunId: second!.id });
    expect((await getTaskRun(ctx.db, first!.id))!.status).toBe('CANCELLED');
  });

  it('closes each query exactly once when two runs of one record race, and a third run changes nothing', async () => {
    useSkill('vitals', [AGE(75), SBP]);
    await import_([row('G1', { age: 15, sbp: 250 })]);
    await run('vitals', ['G1']);
    const opened = await queriesOf('G1');
    expect(opened).toHaveLength(2);

    await import_([row('G1', { age: 30, sbp: 120 })]);
    await Promise.all([run('vitals', ['G1']), run('vitals', ['G1'])]);
    await run('vitals', ['G1']);
    for (const query of opened) {
      const trail = await trailOf('query', query.id);
      expect(trail.map((e) => e.action)).toEqual(['opened', 'released', 'status:closed']);
    }
    expect((await queriesOf('G1')).map((q) => q.status)).toEqual(['closed', 'closed']);
    const live = await (ctx.db as Db).select().from(pendingActions).where(and(eq(pendingActions.projectId, 'nf'), eq(pendingActions.recordId, 'G1'), eq(pendingActions.status, 'open')));
    expect(live).toHaveLength(0);
  });

  it('raises a closed hard-rule finding again when a value its logic reads by a computed name changes', async () => {
    // The query is on age; the logic reads sbp through a name worked out at run time. Every value the rule read
    // decides whether the finding is the one a person closed.
    useSkill('computed', ['{ id: sbp-by-name, field: age, logic: { "<=": [{ var: { cat: ["s", "bp"] } }, 200] }, message: "SBP above 200" }']);
    await import_([row('M1', { age: 40, sbp: 250 })]);
    await run('computed', ['M1']);
    const [query] = await queriesOf('M1');
    await transitionQuery(ctx.db, { projectId: 'nf', queryId: query!.id, to: 'closed', actor: 'dm', comment: 'verified against source' });
    await run('computed', ['M1']);
    expect((await queriesOf('M1')).map((q) => q.status)).toEqual(['closed']);
    await import_([row('M1', { age: 40, sbp: 260 })]);
    await run('computed', ['M1']);
    expect((await queriesOf('M1')).map((q) => [q.id, q.status])).toEqual([[query!.id, 'reopened']]);
  });

  it('raises a closed soft-rule finding again once any value the model saw changes, not only its field', async () => {
    // The model judges the whole record (its modelView); the query is raised on ae_text. A closed finding stays
    // closed while the record is the same, and is raised again when the grade the model also read changes.
    useSoftSkill('ae-whole', 'Judge whether the adverse event text fits its grade.');
    verdict = '{"passed": false, "reason": "text does not fit the grade", "confidence": 0.9, "evidence": "grade"}';
    await import_([row('L1', { ae_text: 'headache', ae_grade: 4 })]);
    await run('ae-whole', ['L1']);
    const [query] = await queriesOf('L1');
    expect(query).toMatchObject({ field: 'ae_text', status: 'open' });
    await transitionQuery(ctx.db, { projectId: 'nf', queryId: query!.id, to: 'closed', actor: 'dm', comment: 'verified against source' });

    await run('ae-whole', ['L1']);
    expect((await queriesOf('L1')).map((q) => q.status)).toEqual(['closed']);
    await import_([row('L1', { ae_text: 'headache', ae_grade: 5 })]);
    await run('ae-whole', ['L1']);
    expect((await queriesOf('L1')).map((q) => [q.id, q.status])).toEqual([[query!.id, 'reopened']]);
  });

  it('raises again a query a reviewer asks for, although an earlier one on the same finding was closed', async () => {
    // Issue 32 keeps a closed finding closed while the values the rule read are unchanged; that is about what a QC
    // run raises by itself, never about a reviewer who rejects a soft rule the model could not judge: their reject
    // is the verdict, a decision taken now.
    useSoftSkill('ae-asked', 'Judge whether the adverse event text is plausible.');
    const jobs = { send: async () => undefined, sendMany: async () => undefined } as unknown as Jobs;
    await import_([row('K1', { ae_text: 'headache' })]);
    verdict = 'not a verdict';
    const [first] = await run('ae-asked', ['K1']);
    await reviewTaskRun({ db: ctx.db, jobs }, first!.id, 'reject', 'dm', 'not plausible');
    const [query] = await queriesOf('K1');
    expect(query).toMatchObject({ field: 'ae_text', status: 'open' });
    await transitionQuery(ctx.db, { projectId: 'nf', queryId: query!.id, to: 'closed', actor: 'dm', comment: 'verified against source' });
    await advanceTaskRun(sop, first!.id);

    const [second] = await run('ae-asked', ['K1']);
    expect(second).toMatchObject({ status: 'SUSPENDED', reviewRequest: { kind: 'soft_rule_unresolved' } });
    await reviewTaskRun({ db: ctx.db, jobs }, second!.id, 'reject', 'dm', 'still not plausible');
    expect((await queriesOf('K1')).map((q) => [q.id, q.status])).toEqual([[query!.id, 'reopened']]);
  });

  it('withdraws the review of a soft rule the model could not judge once a later run judges that the record passes', async () => {
    useSoftSkill('ae-soft', 'Judge whether the adverse event text is plausible.');
    await import_([row('H1', { ae_text: 'headache' })]);
    verdict = 'not a verdict';
    const [unjudged] = await run('ae-soft', ['H1']);
    expect(unjudged).toMatchObject({ status: 'SUSPENDED', reviewRequest: { kind: 'soft_rule_unresolved' } });

    verdict = '{"passed": true, "reason": "plausible", "confidence": 0.9, "evidence": "mild"}';
    const [judged] = await run('ae-soft', ['H1']);
    expect(judged).toMatchObject({ status: 'COMPLETED' });
    expect(await getTaskRun(ctx.db, unjudged!.id)).toMatchObject({ status: 'CANCELLED' });
    expect(await queriesOf('H1')).toEqual([]);
  });
});
