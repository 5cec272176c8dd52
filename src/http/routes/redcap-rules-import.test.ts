import { readFileSync } from 'node:fs';
import path from 'node:path';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportRedcapRulesResult, SkillDryRunResult } from '../../contract/index.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { skillVersions } from '../../core/db/schema/trial.js';
import { packageRoot } from '../../core/paths.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { importRedcapCsv } from '../../trial/import/import-redcap-csv.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { buildServer } from '../server.js';

const fixture = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', name), 'utf8');
const PROJECT = 'dq-rules';
const csvCell = (text: string) => `"${text.replace(/"/g, '""')}"`;
const rulesCsv = (rules: ReadonlyArray<{ name: string; logic: string }>) => ['rule_name,rule_logic,real_time_execution', ...rules.map((r) => `${csvCell(r.name)},${csvCell(r.logic)},n`)].join('\n');

/**
 * The two-arm fixture (test-data/trial/odm): 101-103 in arm 1 (screening, baseline, week 4), 201-202 in arm 2.
 * 101 had its week-4 visit, 102 and 103 not yet; 103's baseline has no SBP; dob is an identifier field.
 */
const WEEK4_MISSING = { name: 'Week 4 visit date missing', logic: "[week4_arm_1][visit_date] = ''" };
const SBP_MISSING = { name: 'Baseline SBP missing', logic: "[baseline_arm_1][sbp] = ''" };
const EITHER_ARM = { name: 'Baseline weight over 200', logic: '[baseline_arm_1][weight] > 200 or [baseline_arm_2][weight] > 200' };
const FIRST_VISIT = { name: 'Consent before March', logic: "[consent_date] < '2024-03-01'" };
const BORN_EARLY = { name: 'Born before 1950', logic: "[dob] <> '' and [dob] < '1950-01-01'" };
const UNSUPPORTED = { name: 'Under 18 today', logic: 'datediff([dob], today(), "y") < 18' };
const MISSPELT = { name: 'Heavy', logic: '[baseline_arm_1][wieght] > 150' };

describe.each(testEngines())('REDCap Data Quality rules import (preview, severity per rule, arms) over HTTP on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  const auth: Record<'coordinator' | 'pi', { authorization: string }> = {} as never;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: PROJECT, name: 'DQ rules' });
    await importRedcapCsv(createTrialStore(ctx.db), PROJECT, { dictionaryCsv: fixture('dictionary.csv'), eventsCsv: fixture('events.csv'), armsCsv: fixture('arms.csv'), recordsCsv: fixture('records.csv') }, 'dm.alice');
    for (const role of ['coordinator', 'pi'] as const) {
      const { user, token } = await ctx.users.create({ name: `dq-${role}`, role });
      await ctx.users.addMember(PROJECT, user.id);
      auth[role] = { authorization: `Bearer ${token}` };
    }
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const post = (route: string, payload: object, who: keyof typeof auth = 'coordinator') =>
    app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/skills/${route}`, headers: auth[who], payload });
  const importRules = async (payload: object, who: keyof typeof auth = 'coordinator') => {
    const response = await post('import-redcap-rules', { skillId: 'site-dq', name: 'Site DQ', ...payload }, who);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as ImportRedcapRulesResult;
  };
  const dryRun = async (yaml: string, who: keyof typeof auth = 'coordinator') => {
    const response = await post('dry-run', { yaml }, who);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as SkillDryRunResult;
  };
  const written = async () => ({
    versions: (await ctx.db.select({ n: count() }).from(skillVersions))[0]!.n,
    audit: (await ctx.db.select({ n: count() }).from(auditLog))[0]!.n,
  });

  it('issue 32: [week4_arm_1][visit_date] = \'\' fires for the subjects of arm 1 only, never for arm 2, whose schedule has no such visit', async () => {
    const imported = await importRules({ csv: rulesCsv([WEEK4_MISSING, SBP_MISSING, EITHER_ARM, FIRST_VISIT]) });
    expect(imported.imported).toBe(4);
    expect(imported.rules.map((rule) => [rule.name, rule.arms])).toEqual([
      [WEEK4_MISSING.name, [1]],
      [SBP_MISSING.name, [1]],
      // Events of both arms: every subject, as a first-visit field.
      [EITHER_ARM.name, undefined],
      [FIRST_VISIT.name, undefined],
    ]);
    expect(imported.yaml).toContain('only for subjects in arm 1');
    const result = await dryRun(imported.yaml!);
    const flagged = (ruleId: string) => result.firing.filter((f) => f.ruleId === ruleId).map((f) => f.recordId).sort();
    expect(flagged('week-4-visit-date-missing')).toEqual(['102', '103']);
    expect(flagged('baseline-sbp-missing')).toEqual(['103']);
    expect(flagged('baseline-weight-over-200')).toEqual(['102']);
    expect(flagged('consent-before-march')).toEqual(['201', '202']);
  });

  it('gives each rule the severity chosen for it (a list, or severities by name for the CSV); error without one', async () => {
    const listed = await importRules({ rules: [{ ...WEEK4_MISSING, severity: 'info' }, { ...SBP_MISSING, severity: 'warning' }, FIRST_VISIT] });
    expect(listed.rules.map((rule) => rule.severity)).toEqual(['info', 'warning', 'error']);
    const fromCsv = await importRules({ csv: rulesCsv([WEEK4_MISSING, SBP_MISSING]), severities: { [SBP_MISSING.name]: 'warning' } });
    expect(fromCsv.rules.map((rule) => rule.severity)).toEqual(['error', 'warning']);
    expect(fromCsv.yaml).toContain('severity: warning');
    // The findings of a QC run (here its dry run) carry them.
    const findings = (await dryRun(listed.yaml!)).firing;
    expect(findings.find((f) => f.ruleId === 'week-4-visit-date-missing')).toMatchObject({ severity: 'info' });
    expect(findings.find((f) => f.ruleId === 'baseline-sbp-missing')).toMatchObject({ severity: 'warning' });
    expect(findings.find((f) => f.ruleId === 'consent-before-march')).toMatchObject({ severity: 'error' });

    const unknown = await post('import-redcap-rules', { skillId: 'site-dq', name: 'Site DQ', csv: rulesCsv([SBP_MISSING]), severities: { 'No such rule': 'info' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toContain('"No such rule", which no rule sent is called');
    expect((await post('import-redcap-rules', { skillId: 'site-dq', name: 'Site DQ', rules: [{ ...SBP_MISSING, severity: 'fatal' }] })).statusCode).toBe(400);
  });

  it('previews every rule as it would be imported or why not, builds no skill and writes nothing', async () => {
    const before = await written();
    const csv = rulesCsv([WEEK4_MISSING, UNSUPPORTED, MISSPELT, BORN_EARLY]);
    const preview = await importRules({ csv, preview: true, severities: { [WEEK4_MISSING.name]: 'warning' } });
    expect(preview).toMatchObject({ preview: true, imported: 1 });
    expect(preview.yaml).toBeUndefined();
    expect(preview.definition).toBeUndefined();
    expect(preview.rules).toEqual([
      { position: 1, line: 2, ...WEEK4_MISSING, status: 'importable', ruleId: 'week-4-visit-date-missing', field: 'week4_arm_1.visit_date', severity: 'warning', arms: [1] },
      { position: 2, line: 3, ...UNSUPPORTED, status: 'refused', reason: expect.stringContaining('function "today"') },
      { position: 3, line: 4, ...MISSPELT, status: 'refused', reason: expect.stringContaining('did you mean "weight"?') },
      // The coordinator may not see dob, so the import would refuse the rule: the preview says so, naming the field.
      { position: 4, line: 5, ...BORN_EARLY, status: 'refused', reason: expect.stringContaining('reads the identifier field dob, which you may not see') },
    ]);
    // The PI sees identifiers: the same rule is importable for them.
    const forPi = await importRules({ csv, preview: true }, 'pi');
    expect(forPi.rules[3]).toMatchObject({ status: 'importable', ruleId: 'born-before-1950', field: 'dob', severity: 'error' });
    expect(forPi.imported).toBe(2);
    // A file none of whose rules can be imported is still listed, rule by rule (the import itself is a 422).
    const none = await importRules({ rules: [UNSUPPORTED, MISSPELT], preview: true });
    expect(none).toMatchObject({ preview: true, imported: 0 });
    expect(none.rules.map((rule) => rule.status)).toEqual(['refused', 'refused']);
    expect((await post('import-redcap-rules', { skillId: 'site-dq', name: 'Site DQ', rules: [UNSUPPORTED, MISSPELT] })).statusCode).toBe(422);
    expect(await written()).toEqual(before);
  });
});
