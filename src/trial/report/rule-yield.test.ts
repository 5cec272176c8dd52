import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectionOf } from '../../testing/error-of.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { listQueries, transitionQuery } from '../queries.js';
import { advanceTaskRun, type SopDeps } from '../sop/engine.js';
import { loadSkill, type Skill } from '../sop/load-skills.js';
import { createTaskRuns } from '../sop/task-runs.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';
import { reportToXlsx } from './export.js';
import { computeRuleYield, isLowYield, type RuleYield } from './rule-yield.js';
import { buildViolationsReport } from './violations-report.js';
import { hardRuleSkillYaml } from '../../testing/skill-yaml.js';

const PROJECT = 'yield';
const RULE = {
  // A: fixed by the site's next export, which the re-run sees.
  age: `{ id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }`,
  // B: the data manager confirms the value with the site and closes the query; nothing changes.
  sbp: `{ id: sbp-max, field: sbp, logic: { "<=": [{ var: sbp }, 200] }, message: "SBP above 200" }`,
  // C: nobody has answered yet.
  weight: `{ id: weight-max, field: weight, logic: { "<=": [{ var: weight }, 150] }, message: "Weight above 150 kg" }`,
  // D: written too strictly, then fixed: its query stops firing without any change to the data.
  dbp: (max: number) => `{ id: dbp-max, field: dbp, logic: { "<=": [{ var: dbp }, ${max}] }, message: "DBP above ${max}" }`,
};


const row = (recordId: string, data: Record<string, unknown>): TrialRecord => ({ recordId, eventName: 'baseline', site: 'SITE-01', data: { record_id: recordId, ...data } as TrialRecord['data'] });

/**
 * Rule yield over a scenario a data manager knows: rule A's queries are fixed by a re-import (a data change), rule B's
 * are closed "no change" by the data manager, rule C's stay open, rule D's stop firing once the rule is fixed (closed
 * without a data change), and a reviewed skill's query is still held. One SQL statement answers it for every rule.
 */
describe.each(testEngines())('rule yield on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let sop: SopDeps;
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-rule-yield-'));
  const current = new Map<string, Skill>();
  let startedAt: string;

  function useSkill(id: string, rules: string[], review = false): void {
    const file = path.join(dir, `${id}-${current.size}-${Date.now()}.yaml`);
    writeFileSync(file, hardRuleSkillYaml(id, rules, review));
    current.set(id, loadSkill(file));
  }

  async function run(skillId: string, recordIds: string[]): Promise<void> {
    const runs = await createTaskRuns(ctx.db, { projectId: PROJECT, skillId, startNode: current.get(skillId)!.startNode, recordIds, actor: 'dm' });
    await Promise.all(runs.map((r) => advanceTaskRun(sop, r.id)));
  }

  const import_ = (rows: TrialRecord[]) => createTrialStore(ctx.db).importRecords(PROJECT, rows, { actor: 'site' });
  const close = async (recordId: string, ruleId: string) => {
    const query = (await listQueries(ctx.db, { projectId: PROJECT, recordId })).find((q) => q.ruleId === ruleId)!;
    await transitionQuery(ctx.db, { projectId: PROJECT, queryId: query.id, to: 'closed', actor: 'dm', comment: 'confirmed with the site' });
  };
  const byRule = (rules: RuleYield[]) => new Map(rules.map((r) => [r.ruleId, r]));

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    sop = { ...ctx.trial.sop, skill: (id) => current.get(id)!, notifier: { configured: true, notify: async () => ({ delivered: true }) }, queueReviewNotice: async () => undefined };
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: PROJECT, name: 'Rule yield' });
    const fields = ['record_id', 'age', 'sbp', 'dbp', 'weight', 'note'];
    await store.replaceDictionary(PROJECT, fields.map((fieldName) => ({ fieldName, formName: 'f', fieldType: fieldName === 'record_id' || fieldName === 'note' ? 'text' : 'integer', label: fieldName, choices: [], validationMin: null, validationMax: null, required: false })), 'test');
    await store.replaceEvents(PROJECT, [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
    startedAt = new Date(Date.now() - 1000).toISOString();

    useSkill('vitals', [RULE.age, RULE.sbp, RULE.weight, RULE.dbp(50)]);
    useSkill('eligibility', [`{ id: age-adult, field: age, logic: { ">=": [{ var: age }, 18] }, message: "Not an adult" }`], true);
    // R1..R3 break A and B; R4 breaks C; R5 breaks only the too-strict D; R6 has its SBP corrected before the close.
    await import_([
      row('R1', { age: 15, sbp: 210, weight: 70, dbp: 40 }),
      row('R2', { age: 16, sbp: 220, weight: 70, dbp: 40 }),
      row('R3', { age: 17, sbp: 230, weight: 70, dbp: 40 }),
      row('R4', { age: 30, sbp: 120, weight: 180, dbp: 40 }),
      row('R5', { age: 30, sbp: 120, weight: 70, dbp: 80 }),
      row('R6', { age: 30, sbp: 240, weight: 70, dbp: 40 }),
    ]);
    await run('vitals', ['R1', 'R2', 'R3', 'R4', 'R5', 'R6']);
    await run('eligibility', ['R1']);
    // The site corrects the ages (and a note, which changes nothing the rules read), and R6's SBP, whose query the data
    // manager then closes by hand.
    await import_([row('R1', { age: 30, sbp: 210, weight: 70, dbp: 40 }), row('R2', { age: 31, sbp: 220, weight: 70, dbp: 40 }), row('R3', { age: 32, sbp: 230, weight: 70, dbp: 40, note: 'checked' }), row('R6', { age: 30, sbp: 140, weight: 70, dbp: 40 })]);
    await close('R6', 'sbp-max');
    useSkill('vitals', [RULE.age, RULE.sbp, RULE.weight, RULE.dbp(120)]);
    await run('vitals', ['R1', 'R2', 'R3', 'R4', 'R5']);
    // The SBP values stand: the data manager closes those queries after the re-run, which still saw them fire.
    for (const recordId of ['R1', 'R2', 'R3']) await close(recordId, 'sbp-max');
  }, 60_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tells data changes, no-change closes, open and held queries apart, per skill, rule and field', async () => {
    const rules = byRule(await computeRuleYield(ctx.db, PROJECT));
    expect(rules.get('age-range')).toEqual({ skillId: 'vitals', ruleId: 'age-range', field: 'age', raised: 3, open: 0, held: 0, answered: 0, closedWithChange: 3, closedNoChange: 0, closedNoLongerFires: 0, cancelled: 0, yield: 1, lowYield: false });
    // Three closed without a change, and R6's closed by hand after the site corrected that very value.
    expect(rules.get('sbp-max')).toEqual({ skillId: 'vitals', ruleId: 'sbp-max', field: 'sbp', raised: 4, open: 0, held: 0, answered: 0, closedWithChange: 1, closedNoChange: 3, closedNoLongerFires: 0, cancelled: 0, yield: 0.25, lowYield: false });
    expect(rules.get('weight-max')).toMatchObject({ raised: 1, open: 1, closedWithChange: 0, closedNoChange: 0, yield: null });
    expect(rules.get('dbp-max')).toMatchObject({ raised: 1, closedWithChange: 0, closedNoChange: 0, closedNoLongerFires: 1, yield: 0 });
    expect(rules.get('age-adult')).toMatchObject({ skillId: 'eligibility', raised: 1, held: 1, open: 0, yield: null });
  });

  it('narrows to one skill and to queries raised since a date, and refuses a since that is not a date', async () => {
    expect((await computeRuleYield(ctx.db, PROJECT, { skillId: 'eligibility' })).map((r) => r.ruleId)).toEqual(['age-adult']);
    expect(await computeRuleYield(ctx.db, PROJECT, { since: '2999-01-01' })).toEqual([]);
    expect((await computeRuleYield(ctx.db, PROJECT, { since: startedAt })).length).toBe(5);
    const refusal = await rejectionOf(computeRuleYield(ctx.db, PROJECT, { since: 'last week' }));
    expect(refusal).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'since' } });
  });

  it('flags a rule as low-yield only with at least ten closed queries and under a fifth of them fixing data', () => {
    const rule = (withChange: number, noChange: number) => ({ closedWithChange: withChange, closedNoChange: noChange, closedNoLongerFires: 0, yield: withChange / (withChange + noChange) });
    expect(isLowYield(rule(1, 9))).toBe(true);
    expect(isLowYield(rule(2, 8))).toBe(false);
    expect(isLowYield(rule(0, 9))).toBe(false);
  });

  it('puts the yield in the violations report and a "Rule yield" sheet of its workbook, without values', async () => {
    const report = await buildViolationsReport(ctx.db, PROJECT);
    expect(report.ruleYield.map((r) => r.ruleId)).toEqual(['age-adult', 'age-range', 'dbp-max', 'sbp-max', 'weight-max']);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await reportToXlsx(report)) as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet('Rule yield')!;
    const rows = sheet.getSheetValues().filter(Boolean).map((cells) => (cells as unknown[]).slice(1));
    expect(rows[0]).toEqual(['Skill', 'Rule', 'Field', 'Raised', 'Open', 'Held', 'Answered', 'Closed, data changed', 'Closed, no change', 'Closed, no longer fires', 'Cancelled', 'Yield', 'Central review?']);
    expect(rows.find((cells) => cells[1] === 'sbp-max')).toEqual(['vitals', 'sbp-max', 'sbp', 4, 0, 0, 0, 1, 3, 0, 0, 0.25, '']);
    expect(rows.find((cells) => cells[1] === 'weight-max')![11]).toBe('');
  });
});
