import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../core/db/connect.js';
import { packageRoot } from '../../core/paths.js';
import { rejectionOf } from '../../testing/error-of.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { identifierMask } from '../identifiers.js';
import { importRedcapCsv } from '../import/import-redcap-csv.js';
import { loadSkill } from '../sop/load-skills.js';
import { loadDictionaries } from '../skills/load-dictionaries.js';
import { createTrialStore } from '../store/trial-store.js';
import { dryRunSkill } from './dry-run.js';
import { importRedcapDqRules } from './redcap-dq-import.js';
import { readRedcapDqCsv } from './redcap-dq-rules.js';

const odmFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', name), 'utf8');

/**
 * A site's Data Quality rules as REDCap exports them, over the longitudinal two-arm fixture (test-data/trial/odm:
 * subjects 101-103 in arm 1, 201-202 in arm 2), one rule per operator the issue lists, with the records each flags in
 * REDCap worked out by hand from records.csv.
 */
const RULES: Array<{ name: string; logic: string; flags: string[] }> = [
  // `<` on a first-visit field, read bare as REDCap reads it.
  { name: 'Consent before the study opened', logic: "[consent_date] < '2024-03-01'", flags: ['201', '202'] },
  // datediff in years; dob is an identifier field.
  { name: 'Over 70 at consent', logic: 'datediff([dob], [consent_date], "y") > 70', flags: ['202'] },
  // event-qualified fields compared with each other, `<>`, `and`, blank ''.
  { name: 'Weight fell by week 4', logic: "[week4_arm_1][weight] <> '' and [baseline_arm_1][weight] > [week4_arm_1][weight]", flags: ['101'] },
  // datediff in days between two events, guarded as REDCap rules guard dates (a blank date is an error violation here):
  // 28 days for both arm-2 subjects.
  { name: 'Week 4 visit after day 27', logic: `[baseline_arm_2][visit_date] <> '' and [week4_arm_2][visit_date] <> '' and datediff([baseline_arm_2][visit_date], [week4_arm_2][visit_date], "d") > 27`, flags: ['201', '202'] },
  // sum skips blanks: 132 + 128 for 101, 145 alone for 102.
  { name: 'SBP sum over 250', logic: 'sum([baseline_arm_1][sbp], [week4_arm_1][sbp]) > 250', flags: ['101'] },
  // A checkbox choice.
  { name: 'Headache at baseline', logic: "[baseline_arm_1][symptoms(1)] = '1'", flags: ['101', '102'] },
  // if(): HbA1c counts for smokers only (202 smokes, 8.2).
  { name: 'Smoker with HbA1c over 8', logic: "if([baseline_arm_2][smoker] = '1', [baseline_arm_2][hba1c], 0) > 8", flags: ['202'] },
  // or of two ands with blanks: 103 had its baseline visit without a blood pressure.
  { name: 'Baseline SBP missing', logic: "([baseline_arm_1][visit_date] <> '' and [baseline_arm_1][sbp] = '') or ([baseline_arm_2][visit_date] <> '' and [baseline_arm_2][sbp] = '')", flags: ['103'] },
];
const UNSUPPORTED = { name: 'Under 18 today', logic: 'datediff([dob], today(), "y") < 18' };
const MISSPELT = { name: 'Heavy at baseline', logic: '[baseline_arm_1][wieght] > 150' };
const UNKNOWN_EVENT = { name: 'Heavy at week 5', logic: '[week5_arm_1][weight] > 150' };

const csvCell = (text: string) => `"${text.replace(/"/g, '""')}"`;
const rulesCsv = (rules: ReadonlyArray<{ name: string; logic: string }>) => ['rule_name,rule_logic,real_time_execution', ...rules.map((r) => `${csvCell(r.name)},${csvCell(r.logic)},n`)].join('\n');

describe.each(testEngines())('REDCap Data Quality rules imported as a skill, on %s', (engine) => {
  let db: Db;
  let close: () => Promise<void>;
  let dir: string;
  const projectId = 'dq-import';

  beforeAll(async () => {
    const database = await openTestDatabase({ engine });
    db = database.db;
    close = () => database.close();
    const store = createTrialStore(db);
    await store.ensureProject({ id: projectId, name: projectId }, 'dm.alice');
    await importRedcapCsv(store, projectId, { dictionaryCsv: odmFile('dictionary.csv'), eventsCsv: odmFile('events.csv'), armsCsv: odmFile('arms.csv'), recordsCsv: odmFile('records.csv') }, 'dm.alice');
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-dq-import-'));
  });

  afterAll(async () => {
    await close?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const importRules = async (csv: string) => {
    const { dictionaries } = await loadDictionaries(db, [projectId]);
    const { rules, problems } = readRedcapDqCsv(csv);
    const imported = importRedcapDqRules({ rules, skillId: 'site-dq', name: 'Site DQ rules', projectId, dictionary: dictionaries[0] });
    return { ...imported, problems: [...problems, ...imported.problems] };
  };

  it('imports every supported rule, and the skill the loader reads fires exactly on the records REDCap flags', async () => {
    const imported = await importRules(rulesCsv([...RULES, UNSUPPORTED, MISSPELT, UNKNOWN_EVENT]));
    expect(imported.imported).toBe(RULES.length);

    // The YAML the editor receives, loaded by the real skill loader from a file.
    const file = path.join(dir, 'site-dq.yaml');
    writeFileSync(file, imported.yaml);
    const skill = loadSkill(file);
    expect(skill.id).toBe('site-dq');
    const rules = skill.compiled.redcap_dq!.rules;
    expect(rules.map((r) => r.message)).toEqual(RULES.map((r) => r.name));
    expect(rules.map((r) => r.field)).toEqual(['consent_date', 'dob', 'week4_arm_1.weight', 'baseline_arm_2.visit_date', 'baseline_arm_1.sbp', 'baseline_arm_1.symptoms___1', 'baseline_arm_2.smoker', 'baseline_arm_1.visit_date']);
    expect(rules[0]!.id).toBe('consent-before-the-study-opened');
    expect(skill.nodes.redcap_dq).toMatchObject({ type: 'hard_rule', on_fail: 'dm_review' });
    expect(skill.nodes.dm_review).toMatchObject({ type: 'human_review' });
    expect(imported.yaml).toContain(`# REDCap: ${RULES[2]!.logic}`);

    // Tried by an admin, who sees identifiers: for anyone else a rule on dob is refused or sees it blank (identifier-rule-access.ts).
    const result = await dryRunSkill(db, { projectId, skill, mask: await identifierMask(db, projectId, { id: 'admin', role: 'admin' }) });
    expect(result).toMatchObject({ records: 5, truncated: false, skippedNodes: [] });
    const flagged = (ruleId: string) => result.firing.filter((f) => f.ruleId === ruleId).map((f) => f.recordId).sort();
    for (const [index, rule] of RULES.entries()) expect(flagged(rules[index]!.id), rule.name).toEqual(rule.flags);
    expect(result.fired).toBe(RULES.reduce((sum, rule) => sum + rule.flags.length, 0));
    expect(result.firing.find((f) => f.field === 'dob')).toMatchObject({ recordId: '202', eventName: 'screening_arm_2', value: '1949-12-24', masked: false });
  });

  it('leaves out a rule with an unsupported function, a misspelt field or an unknown event, naming each', async () => {
    const { problems, imported } = await importRules(rulesCsv([RULES[0]!, UNSUPPORTED, MISSPELT, UNKNOWN_EVENT]));
    expect(imported).toBe(1);
    expect(problems).toEqual([
      { rule: UNSUPPORTED.name, message: expect.stringContaining('function "today"') },
      { rule: MISSPELT.name, message: expect.stringContaining('did you mean "weight"?') },
      { rule: UNKNOWN_EVENT.name, message: expect.stringMatching(/unknown event "week5_arm_1".*did you mean "week4_arm_1"\?/) },
    ]);
  });

  it('refuses an import in which no rule is usable, listing every rule', async () => {
    const error = await rejectionOf(importRules(rulesCsv([UNSUPPORTED, MISSPELT])));
    expect(error).toMatchObject({ code: 'SKILL_INVALID', status: 422 });
    expect(error.message).toContain(UNSUPPORTED.name);
    expect(error.message).toContain(MISSPELT.name);
  });

  it('imports without field checks, saying so, when the project has no dictionary yet', () => {
    const imported = importRedcapDqRules({ rules: [MISSPELT], skillId: 'early', name: 'Early', projectId: 'empty', dictionary: undefined });
    expect(imported.imported).toBe(1);
    expect(imported.problems).toEqual([{ rule: '(dictionary)', message: expect.stringContaining('has no data dictionary yet') }]);
  });

  it('gives rules with the same name distinct ids and rules named in other scripts an id of their position', async () => {
    const { definition } = await importRules(rulesCsv([RULES[0]!, { ...RULES[1]!, name: RULES[0]!.name }, { ...RULES[2]!, name: '体重下降' }]));
    const nodes = definition.nodes as Record<string, { rules?: Array<{ id: string }> }>;
    expect(nodes.redcap_dq!.rules!.map((r) => r.id)).toEqual(['consent-before-the-study-opened', 'consent-before-the-study-opened-2', 'rule-3']);
  });
});
