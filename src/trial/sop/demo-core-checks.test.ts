import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../core/db/connect.js';
import { openTestDatabase } from '../../testing/test-database.js';
import { importRedcapCsv } from '../import/import-redcap-csv.js';
import { createTrialStore } from '../store/trial-store.js';
import { loadSkill } from './load-skills.js';
import { loadRecordContext } from './record-context.js';

const demo = (file: string) => readFileSync(path.join(process.cwd(), 'data', 'demo-trial', file), 'utf8');

describe('the shipped demo skill on the shipped demo trial', () => {
  let database: Database;

  beforeAll(async () => {
    database = await openTestDatabase({ engine: 'pglite' });
    const store = createTrialStore(database.db);
    await store.ensureProject({ id: 'demo-htn-01', name: 'demo' });
    await importRedcapCsv(store, 'demo-htn-01', { dictionaryCsv: demo('dictionary.csv'), eventsCsv: demo('events.csv'), recordsCsv: demo('records.csv') }, 'test');
  });

  afterAll(async () => {
    await database?.close();
  });

  it('finds exactly the planted errors, and nothing else', async () => {
    const skill = loadSkill(path.join(process.cwd(), 'skills', 'demo-core-checks.yaml'));
    const rules = skill.compiled.core_checks!;
    const subjects = [...new Set(demo('records.csv').split('\n').slice(1).filter(Boolean).map((line) => line.split(',')[0]!))];
    expect(subjects).toHaveLength(200);

    const found: string[] = [];
    for (const recordId of subjects) {
      const { data } = await loadRecordContext(database.db, 'demo-htn-01', recordId);
      for (const violation of rules.run(data)) found.push(`${recordId} ${violation.field}`);
    }
    const planted = (JSON.parse(demo('planted-errors.json')) as Array<{ recordId: string; eventName: string; field: string }>).map((e) => `${e.recordId} ${e.eventName}.${e.field}`);

    // The list the issue asks for, spelled out: 3 ages, 3 consents after enrolment, 4 visits out of window, 5 blanks.
    expect(planted.sort()).toEqual([
      'S027 v2_arm_1.visit_date',
      'S037 v1_arm_1.age',
      'S044 v2_arm_1.visit_date',
      'S085 v1_arm_1.consent_date',
      'S102 v3_arm_1.visit_date',
      'S110 v4_arm_1.dbp',
      'S111 v4_arm_1.visit_date',
      'S114 v1_arm_1.weight_kg',
      'S122 v1_arm_1.consent_date',
      'S123 v1_arm_1.age',
      'S137 v2_arm_1.visit_date',
      'S139 v1_arm_1.consent_date',
      'S148 v3_arm_1.sbp',
      'S167 v1_arm_1.age',
      'S175 v1_arm_1.sex',
    ]);
    expect(found.sort()).toEqual(planted.sort());
  });
});
