import { DEMO_AE_TERMS, DEMO_AGE_RANGE, DEMO_DICTIONARY, DEMO_EVENTS, DEMO_SEED, DEMO_SITES, DEMO_SUBJECTS, type PlantedError } from './demo-definition.js';
import { createPrng, type Prng } from './prng.js';
import { toCsv } from './write-csv.js';

interface DemoTrialFiles {
  dictionaryCsv: string;
  eventsCsv: string;
  recordsCsv: string;
  plantedErrors: PlantedError[];
}

/** Enrolment ran from the protocol's approval (v2.0, 2025-02-10) for about half a year. */
const FIRST_ENROLMENT = '2025-03-03';
const ENROLMENT_SPAN_DAYS = 180;

/**
 * The planted errors, few and known, so a newcomer can check that QC finds exactly these. Each goes to its
 * own subject, so one subject never shows two kinds of error at once.
 */
const PLANTED_AGES = [16, 17, 79];
const PLANTED_CONSENT_DELAYS_DAYS = [1, 3, 6];
/** Visit day relative to enrolment, each just outside its window (V2 25–31, V3 51–61, V4 77–91). */
const PLANTED_VISIT_DAYS: ReadonlyArray<{ eventName: string; day: number }> = [
  { eventName: 'v2_arm_1', day: 34 },
  { eventName: 'v3_arm_1', day: 47 },
  { eventName: 'v4_arm_1', day: 96 },
  { eventName: 'v2_arm_1', day: 23 },
];
const PLANTED_BLANKS: ReadonlyArray<{ eventName: string; field: string }> = [
  { eventName: 'v1_arm_1', field: 'sex' },
  { eventName: 'v1_arm_1', field: 'weight_kg' },
  { eventName: 'v2_arm_1', field: 'visit_date' },
  { eventName: 'v3_arm_1', field: 'sbp' },
  { eventName: 'v4_arm_1', field: 'dbp' },
];

const DICTIONARY_HEADER = [
  'Variable / Field Name',
  'Form Name',
  'Section Header',
  'Field Type',
  'Field Label',
  'Choices, Calculations, OR Slider Labels',
  'Field Note',
  'Text Validation Type OR Show Slider Number',
  'Text Validation Min',
  'Text Validation Max',
  'Identifier?',
  'Branching Logic (Show field only if...)',
  'Required Field?',
  'Custom Alignment',
  'Question Number (surveys only)',
  'Matrix Group Name',
  'Matrix Ranking?',
  'Field Annotation',
];

type Row = Record<string, string>;

/** The whole demo trial as REDCap export files, the same bytes for the same seed. */
export function generateDemoTrial(seed = DEMO_SEED): DemoTrialFiles {
  const prng = createPrng(seed);
  const rows: Row[] = [];
  for (let n = 1; n <= DEMO_SUBJECTS; n++) rows.push(...generateSubject(prng, `S${String(n).padStart(3, '0')}`));
  const plantedErrors = plantErrors(prng, rows);
  return { dictionaryCsv: dictionaryCsv(), eventsCsv: eventsCsv(), recordsCsv: recordsCsv(rows), plantedErrors };
}

/** One subject at all four visits, clean: eligible, consented before enrolment, every visit in its window. */
function generateSubject(prng: Prng, recordId: string): Row[] {
  const site = prng.pick(DEMO_SITES);
  const enrollment = addDays(FIRST_ENROLMENT, prng.int(0, ENROLMENT_SPAN_DAYS));
  const consent = addDays(enrollment, -prng.int(0, 14)); // screening runs day -14 to 0
  // Two draws averaged: ages cluster in the fifties and sixties, as in hypertension trials.
  const age = Math.round(DEMO_AGE_RANGE.min + 7 + ((prng.next() + prng.next()) / 2) * (DEMO_AGE_RANGE.max - DEMO_AGE_RANGE.min - 7));
  const arm = prng.pick(['1', '2']);
  const baselineSbp = prng.int(140, 178); // inclusion: screening SBP 140–179
  const baselineWeight = prng.int(480, 1050) / 10;
  // The intervention is meant to work: a larger fall by week 12.
  const fallBy12Weeks = arm === '1' ? prng.int(8, 22) : prng.int(0, 12);

  return DEMO_EVENTS.map((event, visit) => {
    const day = visit === 0 ? 0 : event.dayOffset + prng.int(-event.windowBefore, event.windowAfter);
    const sbp = clamp(Math.round(baselineSbp - (fallBy12Weeks * visit) / 3 + (visit === 0 ? 0 : prng.int(-4, 4))), 105, 178);
    const dbp = clamp(Math.round(sbp * 0.62 + prng.int(-4, 4)), 60, 105);
    const hasAdverseEvent = visit > 0 && prng.next() < 0.08;
    return {
      record_id: recordId,
      redcap_event_name: event.eventName,
      redcap_data_access_group: site,
      consent_date: visit === 0 ? consent : '',
      enrollment_date: visit === 0 ? enrollment : '',
      age: visit === 0 ? String(age) : '',
      sex: visit === 0 ? prng.pick(['1', '2']) : '',
      arm: visit === 0 ? arm : '',
      enrolment_complete: visit === 0 ? '2' : '',
      visit_date: addDays(enrollment, day),
      sbp: String(sbp),
      dbp: String(dbp),
      weight_kg: (baselineWeight + (visit === 0 ? 0 : prng.int(-15, 10) / 10)).toFixed(1),
      ae_occurred: visit === 0 ? '0' : hasAdverseEvent ? '1' : '0',
      ae_term: hasAdverseEvent ? prng.pick(DEMO_AE_TERMS) : '',
      visit_complete: '2',
    };
  });
}

function plantErrors(prng: Prng, rows: Row[]): PlantedError[] {
  const subjects = prng.shuffle([...new Set(rows.map((row) => row.record_id!))]);
  const take = () => subjects.pop()!;
  const rowOf = (recordId: string, eventName: string) => rows.find((row) => row.record_id === recordId && row.redcap_event_name === eventName)!;
  const errors: PlantedError[] = [];

  for (const age of PLANTED_AGES) {
    const v1 = rowOf(take(), 'v1_arm_1');
    v1.age = String(age);
    errors.push({ recordId: v1.record_id!, eventName: 'v1_arm_1', field: 'age', kind: 'age_out_of_range', detail: `age ${age} is outside the inclusion range 18–75 (protocol 3.1)` });
  }
  for (const delayDays of PLANTED_CONSENT_DELAYS_DAYS) {
    const v1 = rowOf(take(), 'v1_arm_1');
    v1.consent_date = addDays(v1.enrollment_date!, delayDays);
    errors.push({ recordId: v1.record_id!, eventName: 'v1_arm_1', field: 'consent_date', kind: 'consent_after_enrollment', detail: `consent ${v1.consent_date} is ${delayDays} day(s) after enrolment ${v1.enrollment_date} (major violation, protocol 6)` });
  }
  for (const { eventName, day } of PLANTED_VISIT_DAYS) {
    const recordId = take();
    const enrollment = rowOf(recordId, 'v1_arm_1').enrollment_date!;
    const event = DEMO_EVENTS.find((candidate) => candidate.eventName === eventName)!;
    rowOf(recordId, eventName).visit_date = addDays(enrollment, day);
    errors.push({ recordId, eventName, field: 'visit_date', kind: 'visit_out_of_window', detail: `visit on day ${day}; window is day ${event.dayOffset - event.windowBefore}–${event.dayOffset + event.windowAfter} (protocol 5)` });
  }
  for (const { eventName, field } of PLANTED_BLANKS) {
    const row = rowOf(take(), eventName);
    row[field] = '';
    // REDCap marks a form saved with a required field blank as incomplete.
    row[field === 'sex' ? 'enrolment_complete' : 'visit_complete'] = '0';
    errors.push({ recordId: row.record_id!, eventName, field, kind: 'missing_required', detail: `required field ${field} is blank (protocol 6)` });
  }
  // Byte order, not localeCompare: the file must be the same bytes under every locale.
  const byKey = (error: PlantedError) => `${error.recordId}\u0000${error.eventName}`;
  return errors.sort((a, b) => (byKey(a) < byKey(b) ? -1 : byKey(a) > byKey(b) ? 1 : 0));
}

function dictionaryCsv(): string {
  const rows = DEMO_DICTIONARY.map((field) => [
    field.field,
    field.form,
    field.section ?? '',
    field.type,
    field.label,
    field.choices ?? '',
    field.note ?? '',
    field.validation ?? '',
    field.min ?? '',
    field.max ?? '',
    '',
    field.branching ?? '',
    field.required ? 'y' : '',
    '',
    '',
    '',
    '',
    '',
  ]);
  return toCsv([DICTIONARY_HEADER, ...rows]);
}

function eventsCsv(): string {
  return toCsv([['event_name', 'label', 'day_offset', 'window_before', 'window_after'], ...DEMO_EVENTS.map((event) => [event.eventName, event.label, String(event.dayOffset), String(event.windowBefore), String(event.windowAfter)])]);
}

/** Columns in REDCap's export order: key columns, then each form's fields followed by its status. */
function recordsCsv(rows: ReadonlyArray<Row>): string {
  const columns = ['record_id', 'redcap_event_name', 'redcap_data_access_group'];
  for (const form of ['enrolment', 'visit']) {
    columns.push(...DEMO_DICTIONARY.filter((field) => field.form === form && field.field !== 'record_id').map((field) => field.field), `${form}_complete`);
  }
  return toCsv([columns, ...rows.map((row) => columns.map((column) => row[column] ?? ''))]);
}

function addDays(isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
