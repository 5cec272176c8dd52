import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportRedcapRulesResult, SkillDryRunResult, SkillImpact } from '../../contract/index.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { pendingActions, qcRuns, skillVersions, taskRuns } from '../../core/db/schema/trial.js';
import { packageRoot } from '../../core/paths.js';
import { multipartBody } from '../../testing/multipart.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { importRedcapCsv } from '../../trial/import/import-redcap-csv.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { buildServer } from '../server.js';

const fixture = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', name), 'utf8');
const PROJECT = 'skill-tools';

/**
 * The active skill of the trial (seeded from its file): four hard rules on the two-arm fixture (test-data/trial/odm).
 * On the data, sbp-range fires on 102 (baseline SBP 145) and weight-max on 102 (250 kg).
 */
const ACTIVE_SKILL = `
id: checks
name: Checks
projects: [${PROJECT}]
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: consent-set, field: consent_date, logic: { "!": { missing: [consent_date] } }, message: "Consent date is blank" }
      - { id: sbp-range, field: baseline_arm_1.sbp, logic: { or: [{ missing: [baseline_arm_1.sbp] }, { "<=": [{ var: baseline_arm_1.sbp }, 140] }] }, message: "Baseline SBP over 140" }
      - { id: weight-max, field: baseline_arm_1.weight, logic: { or: [{ missing: [baseline_arm_1.weight] }, { "<=": [{ var: baseline_arm_1.weight }, 200] }] }, message: "Weight over 200 kg" }
    on_pass: end_ok
    on_fail: end_flagged
`;

/**
 * A skill tried before it is saved: a hard rule on dob (an identifier field; 202 was born in 1949), one on the
 * baseline SBP of arm 1 (102: 145), and a soft rule, which the dry run skips.
 */
const TRIED_SKILL = `
id: tried
name: Tried
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: born-1950-or-later, field: dob, logic: { date_on_or_after: [{ var: dob }, "1950-01-01"] }, message: "Born before 1950" }
      - { id: sbp-140, field: baseline_arm_1.sbp, logic: { or: [{ missing: [baseline_arm_1.sbp] }, { "<=": [{ var: baseline_arm_1.sbp }, 140] }] }, message: "Baseline SBP over 140" }
    on_pass: judge
    on_fail: judge
  judge:
    type: soft_instruction
    instruction: Is the lab comment plausible?
    on_pass: end_ok
    on_fail: end_flagged
`;

describe.each(testEngines())('skill tools (dry run, REDCap rules import, amendment impact) over HTTP on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let skillsDir: string;
  const auth: Record<'coordinator' | 'pi' | 'viewer' | 'outsider', { authorization: string }> = {} as never;

  beforeAll(async () => {
    skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-skill-tools-'));
    writeFileSync(path.join(skillsDir, 'checks.yaml'), ACTIVE_SKILL);
    ctx = await buildTestContext({ engine, env: { SKILLS_DIR: skillsDir } });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: PROJECT, name: 'Skill tools' });
    await ctx.users.createProject({ id: 'elsewhere', name: 'Another trial' });
    await importRedcapCsv(createTrialStore(ctx.db), PROJECT, { dictionaryCsv: fixture('dictionary.csv'), eventsCsv: fixture('events.csv'), armsCsv: fixture('arms.csv'), recordsCsv: fixture('records.csv') }, 'dm.alice');
    for (const role of ['coordinator', 'pi', 'viewer'] as const) {
      const { user, token } = await ctx.users.create({ name: `tools-${role}`, role });
      await ctx.users.addMember(PROJECT, user.id);
      auth[role] = { authorization: `Bearer ${token}` };
    }
    const outsider = await ctx.users.create({ name: 'tools-outsider', role: 'coordinator' });
    await ctx.users.addMember('elsewhere', outsider.user.id);
    auth.outsider = { authorization: `Bearer ${outsider.token}` };

    // Live queries a QC run of "checks" raised on 102, and one of another skill with a rule of the same id.
    const [checksRun, otherRun] = await ctx.db
      .insert(taskRuns)
      .values([
        { projectId: PROJECT, skillId: 'checks', recordId: '102', status: 'COMPLETED', currentNode: 'end_flagged' },
        { projectId: PROJECT, skillId: 'other-skill', recordId: '101', status: 'COMPLETED', currentNode: 'end_flagged' },
      ])
      .returning();
    const query = { projectId: PROJECT, eventName: 'baseline_arm_1', site: 'site_a', nodeId: 'hard', severity: 'error' as const };
    await ctx.db.insert(pendingActions).values([
      { ...query, taskRunId: checksRun!.id, recordId: '102', ruleId: 'weight-max', field: 'baseline_arm_1.weight', message: 'Weight over 200 kg', value: 250 },
      { ...query, taskRunId: checksRun!.id, recordId: '102', ruleId: 'sbp-range', field: 'baseline_arm_1.sbp', message: 'Baseline SBP over 140', value: 145 },
      { ...query, taskRunId: otherRun!.id, recordId: '101', ruleId: 'weight-max', field: 'baseline_arm_1.weight', message: 'Weight', value: 72.5 },
    ]);
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    if (skillsDir) rmSync(skillsDir, { recursive: true, force: true });
  });

  const post = (route: string, payload: object, who: keyof typeof auth = 'coordinator', projectId = PROJECT) =>
    app.inject({ method: 'POST', url: `/api/iit/projects/${projectId}/skills/${route}`, headers: auth[who], payload });
  /** Every table a QC run, a query or an audit entry would write to. */
  const rowCounts = async () => {
    const rows = async (table: typeof taskRuns | typeof pendingActions | typeof qcRuns | typeof auditLog | typeof skillVersions) => (await ctx.db.select({ n: count() }).from(table))[0]!.n;
    return { taskRuns: await rows(taskRuns), queries: await rows(pendingActions), qcRuns: await rows(qcRuns), audit: await rows(auditLog), skillVersions: await rows(skillVersions) };
  };
  const firingOf = (result: SkillDryRunResult) => result.firing.map((f) => `${f.recordId} ${f.ruleId}`);

  describe('POST /skills/dry-run', () => {
    it('tries a skill on the whole trial: the records its hard rules would flag, soft rules skipped, nothing written', async () => {
      const before = await rowCounts();
      // The PI: the skill reads dob, an identifier field only those who see identifiers may try rules on.
      const response = await post('dry-run', { yaml: TRIED_SKILL }, 'pi');
      expect(response.statusCode, response.body).toBe(200);
      const result = response.json() as SkillDryRunResult;
      expect(result).toMatchObject({ skillId: 'tried', records: 5, fired: 2, recordsFiring: 2, truncated: false });
      expect(firingOf(result)).toEqual(['102 sbp-140', '202 born-1950-or-later']);
      expect(result.firing[0]).toMatchObject({ eventName: 'baseline_arm_1', node: 'hard', field: 'baseline_arm_1.sbp', message: 'Baseline SBP over 140', severity: 'error', value: 145, masked: false });
      expect(result.skippedNodes).toEqual([{ node: 'judge', reason: expect.stringContaining('soft rule') }]);
      expect(await rowCounts()).toEqual(before);
    });

    it('tries one record, and answers 404 for a record the trial does not have', async () => {
      const one = (await post('dry-run', { yaml: TRIED_SKILL, recordId: '102' }, 'pi')).json() as SkillDryRunResult;
      expect(one).toMatchObject({ records: 1, fired: 1 });
      expect(firingOf(one)).toEqual(['102 sbp-140']);
      const missing = await post('dry-run', { yaml: TRIED_SKILL, recordId: '999' }, 'pi');
      expect(missing.statusCode).toBe(404);
      expect(missing.json().message).toContain('Record "999" does not exist');
    });

    it('refuses a skill reading an identifier field to a member without identifier access (its verdicts would tell the value); the PI sees it', async () => {
      const onDob = (result: SkillDryRunResult) => result.firing.find((f) => f.field === 'dob');
      const coordinator = await post('dry-run', { yaml: TRIED_SKILL, recordId: '202' });
      expect(coordinator.statusCode).toBe(403);
      expect(coordinator.json()).toMatchObject({ code: 'FORBIDDEN', details: { fields: ['dob'] } });
      const pi = (await post('dry-run', { yaml: TRIED_SKILL, recordId: '202' }, 'pi')).json() as SkillDryRunResult;
      expect(onDob(pi)).toMatchObject({ value: '1949-12-24', masked: false });
    });

    it('takes the skill as a definition object too', async () => {
      const definition = { id: 'obj', name: 'Object', start_node: 'hard', nodes: { hard: { type: 'hard_rule', rules: [{ id: 'male', field: 'sex', logic: { '==': [{ var: 'sex' }, '2'] }, message: 'Not female' }], on_pass: 'end_ok', on_fail: 'end_flagged' } } };
      const result = (await post('dry-run', { definition })).json() as SkillDryRunResult;
      expect(firingOf(result)).toEqual(['101 male', '103 male', '202 male']);
    });

    it('refuses an invalid skill with 422 listing every problem, and a request with neither or both forms with 400', async () => {
      const invalid = TRIED_SKILL.replace('date_on_or_after', 'between').replace('{ var: baseline_arm_1.sbp }, 140', '{ var: baseline_arm_1.sbpp }, 140').replace('on_fail: end_flagged', 'on_fail: nowhere');
      const response = await post('dry-run', { yaml: invalid }, 'pi');
      expect(response.statusCode).toBe(422);
      const body = response.json() as { code: string; details: { problems: Array<{ path: string; message: string }> } };
      expect(body.code).toBe('SKILL_INVALID');
      const messages = body.details.problems.map((p) => `${p.path}: ${p.message}`).join('\n');
      expect(messages).toContain('unknown operator "between"');
      expect(messages).toContain('did you mean "sbp"');
      expect(messages).toContain('"nowhere" is neither a node nor an end state');
      expect((await post('dry-run', { yaml: 'id: [' })).statusCode).toBe(422);
      expect((await post('dry-run', {})).statusCode).toBe(400);
      expect((await post('dry-run', { yaml: TRIED_SKILL, definition: { id: 'x' } })).statusCode).toBe(400);
    });

    it('is for members who may change data: viewers get 403, members of other trials 404', async () => {
      expect((await post('dry-run', { yaml: TRIED_SKILL }, 'viewer')).statusCode).toBe(403);
      const outsider = await post('dry-run', { yaml: TRIED_SKILL }, 'outsider');
      expect(outsider.statusCode).toBe(404);
      expect(outsider.json().message).toContain(`Project "${PROJECT}" does not exist or you are not a member`);
    });
  });

  describe('POST /skills/import-redcap-rules', () => {
    const CSV = [
      'rule_name,rule_logic,real_time_execution',
      '"Baseline SBP over 140","[baseline_arm_1][sbp] <> \'\' and [baseline_arm_1][sbp] > 140",n',
      '"Under 18 today","datediff([dob], today(), ""y"") < 18",n',
    ].join('\n');

    it('turns the rules export into a skill for the editor, listing the rule it cannot hold; the skill dry-runs as REDCap flags', async () => {
      const before = await rowCounts();
      const response = await post('import-redcap-rules', { csv: CSV, skillId: 'site-dq', name: 'Site DQ' });
      expect(response.statusCode, response.body).toBe(200);
      const imported = response.json() as ImportRedcapRulesResult;
      expect(imported).toMatchObject({ imported: 1, definition: { id: 'site-dq', name: 'Site DQ', projects: [PROJECT], start_node: 'redcap_dq' } });
      expect(imported.problems).toEqual([{ rule: 'Under 18 today', message: expect.stringContaining('function "today"') }]);
      expect(await rowCounts()).toEqual(before);
      const tried = (await post('dry-run', { yaml: imported.yaml })).json() as SkillDryRunResult;
      expect(firingOf(tried)).toEqual(['102 baseline-sbp-over-140']);
    });

    it('takes the rules as a list, and refuses neither or both, a bad skill id, and a viewer', async () => {
      const listed = await post('import-redcap-rules', { rules: [{ name: 'Heavy', logic: '[baseline_arm_1][weight] > 200' }], skillId: 'listed', name: 'Listed' });
      expect(listed.statusCode, listed.body).toBe(200);
      expect((listed.json() as ImportRedcapRulesResult).imported).toBe(1);
      expect((await post('import-redcap-rules', { skillId: 'none', name: 'None' })).statusCode).toBe(400);
      expect((await post('import-redcap-rules', { csv: CSV, rules: [{ name: 'a', logic: '[sex] = 1' }], skillId: 'both', name: 'Both' })).statusCode).toBe(400);
      expect((await post('import-redcap-rules', { csv: CSV, skillId: 'Bad Id', name: 'Bad' })).statusCode).toBe(400);
      expect((await post('import-redcap-rules', { csv: CSV, skillId: 'site-dq', name: 'Site DQ' }, 'viewer')).statusCode).toBe(403);
      expect((await post('import-redcap-rules', { csv: CSV, skillId: 'site-dq', name: 'Site DQ' }, 'outsider')).statusCode).toBe(404);
    });
  });

  describe('POST /skills/impact', () => {
    // sbp-range changed (140 -> 150: 102 no longer fires), weight-max removed, hba1c-max added (202: 8.2), consent-set kept.
    const PROPOSED = ACTIVE_SKILL.replace('{ var: baseline_arm_1.sbp }, 140', '{ var: baseline_arm_1.sbp }, 150').replace(
      /      - \{ id: weight-max.*\n/,
      '      - { id: hba1c-max, field: baseline_arm_2.hba1c, logic: { or: [{ missing: [baseline_arm_2.hba1c] }, { "<=": [{ var: baseline_arm_2.hba1c }, 8] }] }, message: "HbA1c over 8" }\n',
    );

    it('lists the added, removed and changed rules, their live queries, the records whose verdicts change and those to re-run', async () => {
      const before = await rowCounts();
      const response = await post('impact', { yaml: PROPOSED });
      expect(response.statusCode, response.body).toBe(200);
      const impact = response.json() as SkillImpact;
      expect(impact).toMatchObject({
        skillId: 'checks',
        isNewSkill: false,
        rules: {
          added: [{ ruleId: 'hba1c-max', node: 'hard', kind: 'hard', field: 'baseline_arm_2.hba1c' }],
          removed: [{ ruleId: 'weight-max', node: 'hard', kind: 'hard', field: 'baseline_arm_1.weight' }],
          changed: [{ ruleId: 'sbp-range', changes: ['logic'] }],
          unchanged: 1,
        },
        // The other skill's weight-max query on 101 is not this skill's.
        openQueries: { total: 2, byRule: [{ ruleId: 'weight-max', count: 1, action: 'close_if_rule_removed' }, { ruleId: 'sbp-range', count: 1, action: 'recheck' }] },
        records: { evaluated: 5, affected: 2, sample: [{ recordId: '102', ruleIds: ['sbp-range', 'weight-max'] }, { recordId: '202', ruleIds: ['hba1c-max'] }] },
        rerun: { recordIds: ['102', '202'], count: 2, truncated: false },
        skippedNodes: [],
      });
      expect(await rowCounts()).toEqual(before);
    });

    it('treats a skill no version of which is active for the trial as all new', async () => {
      const impact = (await post('impact', { yaml: TRIED_SKILL }, 'pi')).json() as SkillImpact;
      expect(impact).toMatchObject({ skillId: 'tried', isNewSkill: true, rules: { added: [{ ruleId: 'born-1950-or-later' }, { ruleId: 'sbp-140' }, { ruleId: 'judge', kind: 'soft' }], removed: [], changed: [], unchanged: 0 }, openQueries: { total: 0, byRule: [] } });
      expect(impact.records.affected).toBe(2);
      expect(impact.skippedNodes).toEqual([{ node: 'judge', reason: expect.stringContaining('re-run every record') }]);
    });

    it('is for members who may change data', async () => {
      expect((await post('impact', { yaml: PROPOSED }, 'viewer')).statusCode).toBe(403);
      expect((await post('impact', { yaml: PROPOSED }, 'outsider')).statusCode).toBe(404);
    });
  });

  describe('POST /imports?preview=true', () => {
    it("lists the rules of the trial's skills that read a field the new dictionary removes or changes", async () => {
      const dictionary = fixture('dictionary.csv')
        .split('\n')
        .filter((line) => !line.startsWith('weight,'))
        .map((line) => (line.startsWith('sex,') ? line.replace('"1, Male | 2, Female"', '"1, Male | 2, Female | 3, Other"') : line))
        .join('\n');
      // The one quoted note (with a comma and a line break) made plain, so columns can be cut at commas.
      const lines = fixture('records.csv').replace(/"Sample[\s\S]*?<ok>"/, 'redrawn').trim().split('\n');
      const weightColumn = lines[0]!.split(',').indexOf('weight');
      const withoutWeight = lines.map((line) => line.split(',').filter((_, i) => i !== weightColumn).join(',')).join('\n');
      const upload = multipartBody({ files: { dictionary: { name: 'dictionary.csv', content: dictionary }, events: { name: 'events.csv', content: fixture('events.csv') }, arms: { name: 'arms.csv', content: fixture('arms.csv') }, records: { name: 'records.csv', content: withoutWeight } } });
      const response = await app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/imports?preview=true`, headers: { ...auth.coordinator, ...upload.headers }, payload: upload.payload });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ importable: true, rulesAffected: [{ skillId: 'checks', node: 'hard', ruleId: 'weight-max', field: 'weight', change: 'field_removed' }] });
    });
  });
});
