import { crashCheckSkill } from '../crash-check-skill.js';
import { CHAOS_SOFT_INSTRUCTION } from './chaos-model.js';

export const CHAOS_PROJECT = 'chaos';
export const CHAOS_SKILL_ID = 'chaos-check';

export const CHAOS_SKILL = crashCheckSkill({ id: CHAOS_SKILL_ID, name: 'Chaos test checks', instruction: CHAOS_SOFT_INSTRUCTION });

export interface SeededRecord {
  recordId: string;
  age: number;
  consentDate: string;
  weightKg: number | null;
  /** The rule ids this record must violate, from how it was built: one query each. */
  violations: string[];
}

/** Records of one batch: every 10th too old, every 25th consented late, every 40th without a weight. */
export function batchRecords(batch: number, count: number): SeededRecord[] {
  return Array.from({ length: count }, (_, index) => {
    const i = index + 1;
    const violations: string[] = [];
    const record: SeededRecord = { recordId: `B${batch}-${String(i).padStart(4, '0')}`, age: 40 + (i % 20), consentDate: '2025-03-01', weightKg: 70, violations };
    if (i % 10 === 3) (record.age = 90), violations.push('age-range');
    if (i % 25 === 13) (record.consentDate = '2025-03-12'), violations.push('consent-first');
    if (i % 40 === 21) (record.weightKg = null), violations.push('weight-required');
    return record;
  });
}

const DICTIONARY_HEADER = '"Variable / Field Name","Form Name","Section Header","Field Type","Field Label","Choices, Calculations, OR Slider Labels","Field Note","Text Validation Type OR Show Slider Number","Text Validation Min","Text Validation Max","Identifier?","Branching Logic (Show field only if...)","Required Field?","Custom Alignment","Question Number (surveys only)","Matrix Group Name","Matrix Ranking?","Field Annotation"';
const DICTIONARY = [
  DICTIONARY_HEADER,
  'record_id,baseline,,text,Subject ID,,,,,,,,,,,,,',
  'age,baseline,,text,Age,,,integer,0,120,,,,,,,,',
  'consent_date,baseline,,text,Consent date,,,date_ymd,,,,,,,,,,',
  'enrollment_date,baseline,,text,Enrolment date,,,date_ymd,,,,,,,,,,',
  'weight_kg,baseline,,text,Weight (kg),,,number,,,,,,,,,,',
  'ae_text,baseline,,notes,Adverse events,,,,,,,,,,,,,',
].join('\n');

/** The batch as the REDCap CSV export a data manager uploads (the multipart parts of the console and `clinagent import`). */
export function importForm(records: SeededRecord[]): FormData {
  const rows = records.map((r) => [r.recordId, r.age, r.consentDate, '2025-03-10', r.weightKg ?? '', 'none'].join(','));
  const form = new FormData();
  form.append('dictionary', new Blob([DICTIONARY]), 'dictionary.csv');
  form.append('records', new Blob([['record_id,age,consent_date,enrollment_date,weight_kg,ae_text', ...rows].join('\n')]), 'records.csv');
  return form;
}
