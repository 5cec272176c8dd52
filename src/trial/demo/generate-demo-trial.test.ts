import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { parseDictionaryCsv } from '../import/parse-dictionary.js';
import { parseEventsCsv } from '../import/parse-events.js';
import { parseRecordsCsv } from '../import/parse-records.js';
import { DEMO_FILE_NAMES, demoTrialDir, readPlantedErrors } from './demo-files.js';
import { generateDemoTrial } from './generate-demo-trial.js';

const committed = (name: string) => readFileSync(path.join(demoTrialDir(), name), 'utf8');

/**
 * The records as plain strings, read with csv-parse directly rather than through our importer, so the
 * checks below are independent of the code under test.
 */
const rows = parse(committed(DEMO_FILE_NAMES.recordsCsv), { columns: true }) as Array<Record<string, string>>;
const schedule = parse(committed(DEMO_FILE_NAMES.eventsCsv), { columns: true }) as Array<Record<string, string>>;
const dictionary = parse(committed(DEMO_FILE_NAMES.dictionaryCsv), { columns: true }) as Array<Record<string, string>>;
const v1Of = new Map(rows.filter((row) => row.redcap_event_name === 'v1_arm_1').map((row) => [row.record_id!, row]));
const daysBetween = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);
const key = (error: { recordId: string; eventName: string; field: string; kind: string }) => `${error.recordId} ${error.eventName} ${error.field} ${error.kind}`;

describe('the generated demo trial', () => {
  it('matches the committed files byte for byte, so generate.ts reproduces them', () => {
    const generated = generateDemoTrial();
    expect(committed(DEMO_FILE_NAMES.dictionaryCsv)).toBe(generated.dictionaryCsv);
    expect(committed(DEMO_FILE_NAMES.eventsCsv)).toBe(generated.eventsCsv);
    expect(committed(DEMO_FILE_NAMES.recordsCsv)).toBe(generated.recordsCsv);
    expect(committed(DEMO_FILE_NAMES.plantedErrors)).toBe(`${JSON.stringify(generated.plantedErrors, null, 2)}\n`);
    expect(generateDemoTrial(1).recordsCsv).not.toBe(generated.recordsCsv);
  });

  it('has 200 subjects, each at all four visits, in three sites', () => {
    expect(v1Of.size).toBe(200);
    expect(rows).toHaveLength(800);
    expect(new Set(rows.map((row) => row.redcap_data_access_group))).toEqual(new Set(['SITE-01', 'SITE-02', 'SITE-03']));
    for (const recordId of v1Of.keys()) {
      expect(rows.filter((row) => row.record_id === recordId).map((row) => row.redcap_event_name)).toEqual(['v1_arm_1', 'v2_arm_1', 'v3_arm_1', 'v4_arm_1']);
    }
  });

  it('holds exactly the planted errors listed in planted-errors.json', () => {
    const found: string[] = [];
    // Protocol 3.1: age 18–75.
    for (const row of v1Of.values()) {
      if (row.age !== '' && (Number(row.age) < 18 || Number(row.age) > 75)) found.push(key({ recordId: row.record_id!, eventName: 'v1_arm_1', field: 'age', kind: 'age_out_of_range' }));
    }
    // Protocol 6: consent on or before enrolment.
    for (const row of v1Of.values()) {
      if (row.consent_date && row.enrollment_date && row.consent_date > row.enrollment_date) found.push(key({ recordId: row.record_id!, eventName: 'v1_arm_1', field: 'consent_date', kind: 'consent_after_enrollment' }));
    }
    // Protocol 5: each visit within its window around day 0 = enrolment.
    for (const row of rows) {
      const event = schedule.find((candidate) => candidate.event_name === row.redcap_event_name)!;
      const enrollment = v1Of.get(row.record_id!)!.enrollment_date!;
      if (!row.visit_date || !enrollment) continue;
      const day = daysBetween(enrollment, row.visit_date);
      if (day < Number(event.day_offset) - Number(event.window_before) || day > Number(event.day_offset) + Number(event.window_after)) {
        found.push(key({ recordId: row.record_id!, eventName: row.redcap_event_name!, field: 'visit_date', kind: 'visit_out_of_window' }));
      }
    }
    // Protocol 6: required fields, on the events whose form was filled in (its status column is not blank).
    for (const row of rows) {
      for (const field of dictionary.filter((candidate) => candidate['Required Field?'] === 'y')) {
        const formName = field['Form Name']!;
        const fieldName = field['Variable / Field Name']!;
        if (row[`${formName}_complete`] !== '' && row[fieldName] === '') found.push(key({ recordId: row.record_id!, eventName: row.redcap_event_name!, field: fieldName, kind: 'missing_required' }));
      }
    }

    const planted = readPlantedErrors();
    expect(found.sort()).toEqual(planted.map(key).sort());
    const kinds = planted.map((error) => error.kind);
    expect([kinds.filter((kind) => kind === 'age_out_of_range').length, kinds.filter((kind) => kind === 'consent_after_enrollment').length, kinds.filter((kind) => kind === 'visit_out_of_window').length, kinds.filter((kind) => kind === 'missing_required').length]).toEqual([3, 3, 4, 5]);
    // One error per subject, so no subject shows two kinds at once.
    expect(new Set(planted.map((error) => error.recordId)).size).toBe(planted.length);
  });

  it('is otherwise clean: eligible blood pressure, no safety thresholds crossed, consistent adverse events', () => {
    for (const row of rows) {
      const isPlantedBlank = row.sbp === '' || row.dbp === '';
      if (!isPlantedBlank) {
        // Protocol 7: SBP ≥ 180 or DBP ≥ 110 would call for immediate assessment.
        expect(Number(row.sbp)).toBeLessThan(180);
        expect(Number(row.dbp)).toBeLessThan(110);
        expect(Number(row.dbp)).toBeLessThan(Number(row.sbp));
      }
      expect(row.ae_term !== '').toBe(row.ae_occurred === '1');
    }
    for (const row of v1Of.values()) {
      expect(row.visit_date).toBe(row.enrollment_date);
      expect(Number(row.sbp)).toBeGreaterThanOrEqual(140); // inclusion: screening SBP 140–179
      expect(daysBetween(row.consent_date || row.enrollment_date!, row.enrollment_date!)).toBeLessThanOrEqual(14);
    }
  });

  it('passes the importer\'s checks, with no dictionary range broken', () => {
    const fields = parseDictionaryCsv(committed(DEMO_FILE_NAMES.dictionaryCsv));
    const events = parseEventsCsv(committed(DEMO_FILE_NAMES.eventsCsv));
    expect(parseRecordsCsv(committed(DEMO_FILE_NAMES.recordsCsv), { fields, events })).toHaveLength(800);
  });
});
