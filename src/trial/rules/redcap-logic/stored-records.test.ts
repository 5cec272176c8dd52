import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../core/db/connect.js';
import { packageRoot } from '../../../core/paths.js';
import { openTestDatabase, testEngines } from '../../../testing/test-database.js';
import { importRedcapCsv } from '../../import/import-redcap-csv.js';
import { loadRecordContext } from '../../sop/record-context.js';
import { createTrialStore } from '../../store/trial-store.js';
import { dataQualityRule } from './test-helpers.js';

const readTrialTestFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name), 'utf8');

/**
 * REDCap logic run on records exactly as QC sees them: a REDCap export (two visits, a checkbox field, integer,
 * number and date fields, blanks) imported by the importer and loaded by loadRecordContext.
 */
describe.each(testEngines())('REDCap logic on imported records on %s', (engine) => {
  let close: () => Promise<void>;
  let db: Db;
  const projectId = 'redcap-logic';
  const firing = async (logic: string) => {
    const rule = dataQualityRule(logic);
    const fired: string[] = [];
    for (const recordId of ['S001', 'S002']) if (rule.fires((await loadRecordContext(db, projectId, recordId)).data)) fired.push(recordId);
    return fired;
  };

  beforeAll(async () => {
    const database = await openTestDatabase({ engine });
    close = () => database.close();
    db = database.db;
    const store = createTrialStore(db);
    await store.ensureProject({ id: projectId, name: projectId }, 'dm.alice');
    const files = { dictionaryCsv: readTrialTestFile('redcap-dictionary.csv'), eventsCsv: readTrialTestFile('redcap-events.csv'), recordsCsv: readTrialTestFile('redcap-records.csv') };
    await importRedcapCsv(store, projectId, files, 'dm.alice');
  });

  afterAll(async () => {
    await close?.();
  });

  it('reads first-visit fields bare and every visit by event name', async () => {
    expect(await firing('[age] < 50')).toEqual(['S001', 'S002']); // S002's blank age is below 50, as in REDCap
    expect(await firing("[age] <> '' and [age] < 50")).toEqual(['S001']);
    expect(await firing("[v1_arm_1][age] = ''")).toEqual(['S002']);
    expect(await firing('[v2_arm_1][sbp] < [v1_arm_1][sbp]')).toEqual(['S001']); // S002 has no V1 blood pressure: "138" < "" is false
    expect(await firing('sum([v1_arm_1][sbp], [v2_arm_1][sbp]) > 280')).toEqual(['S001']);
  });

  it('reads checkbox choices, dates and calculated fields as the export stored them', async () => {
    expect(await firing("[symptoms(1)] = '1'")).toEqual(['S001']);
    expect(await firing("[symptoms(3)] = '1' and [symptoms(2)] <> '1'")).toEqual(['S001']);
    expect(await firing('datediff([consent_date], [visit_date], "d", true) > 0')).toEqual(['S001']);
    expect(await firing('datediff([v1_arm_1][visit_date], [v2_arm_1][visit_date], "d") <> 28')).toEqual(['S002']); // day 28 and day 29
    // The dictionary's own calculation and branching logic.
    expect(await firing("[bmi] <> '' and round([weight_kg]/(1.7*1.7),1) <> [bmi]")).toEqual(['S001']);
    expect(await firing("[v2_arm_1][ae_occurred] = '1' and [v2_arm_1][ae_start] = ''")).toEqual([]);
    expect(await firing("[v2_arm_1][ae_occurred] = '1' and [v2_arm_1][ae_start] <> ''")).toEqual(['S001']);
  });
});
