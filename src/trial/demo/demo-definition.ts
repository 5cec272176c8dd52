/**
 * The synthetic trial DEMO-HTN-01, as scenarios/documents/protocol-qa/DEMO-HTN-01-protocol.md describes it:
 * a hypertension IIT at three sites, visits V1 (day 0), V2 (day 28 ±3), V3 (day 56 ±5), V4 (day 84 ±7),
 * inclusion age 18–75, consent before enrolment. No real patients or sites.
 */
export const DEMO_PROJECT = { id: 'demo-htn-01', name: 'DEMO-HTN-01 家庭血压监测高血压研究 Home BP monitoring in hypertension (synthetic)' } as const;

/** Changing the seed changes every subject: regenerate data/demo-trial/ and update the docs that cite it. */
export const DEMO_SEED = 20250210;
export const DEMO_SUBJECTS = 200;
export const DEMO_SITES = ['SITE-01', 'SITE-02', 'SITE-03'] as const;

/** Protocol section 3.1, inclusion criterion 1. */
export const DEMO_AGE_RANGE = { min: 18, max: 75 } as const;

/** Protocol section 5; V0 screening has no CRF data in this demo. */
export const DEMO_EVENTS = [
  { eventName: 'v1_arm_1', label: 'V1 基线 Baseline (day 0)', dayOffset: 0, windowBefore: 0, windowAfter: 0 },
  { eventName: 'v2_arm_1', label: 'V2 第4周 Week 4 (day 28 ±3)', dayOffset: 28, windowBefore: 3, windowAfter: 3 },
  { eventName: 'v3_arm_1', label: 'V3 第8周 Week 8 (day 56 ±5)', dayOffset: 56, windowBefore: 5, windowAfter: 5 },
  { eventName: 'v4_arm_1', label: 'V4 第12周 Week 12 (day 84 ±7)', dayOffset: 84, windowBefore: 7, windowAfter: 7 },
] as const;

/** One data-dictionary row in REDCap's own terms (text + "integer" validation, not our "integer" type). */
interface RedcapDictionaryRow {
  field: string;
  form: 'enrolment' | 'visit';
  section?: string;
  type: 'text' | 'radio' | 'yesno';
  label: string;
  choices?: string;
  note?: string;
  validation?: string;
  min?: string;
  max?: string;
  branching?: string;
  required?: boolean;
}

/**
 * The CRF. Dictionary ranges are plausibility limits a site could still enter by mistake; the protocol's
 * age 18–75 is deliberately not a dictionary range, so an ineligible age imports and QC has to find it.
 * Required fields follow protocol section 6.
 */
export const DEMO_DICTIONARY: ReadonlyArray<RedcapDictionaryRow> = [
  { field: 'record_id', form: 'enrolment', type: 'text', label: '受试者编号 Subject ID' },
  { field: 'consent_date', form: 'enrolment', section: '知情同意与入组 Consent and enrolment', type: 'text', label: '知情同意日期 Date of informed consent', validation: 'date_ymd', required: true },
  { field: 'enrollment_date', form: 'enrolment', type: 'text', label: '入组（随机）日期 Enrolment (randomisation) date', note: 'Day 0; must not precede consent', validation: 'date_ymd', required: true },
  { field: 'age', form: 'enrolment', type: 'text', label: '年龄（岁）Age (years)', note: 'Inclusion: 18–75 years', validation: 'integer', min: '0', max: '120', required: true },
  { field: 'sex', form: 'enrolment', type: 'radio', label: '性别 Sex', choices: '1, 男 Male | 2, 女 Female', required: true },
  { field: 'arm', form: 'enrolment', type: 'radio', label: '随机分组 Randomised arm', choices: '1, 干预组 Intervention (home BP + remote pharmacist) | 2, 对照组 Control (usual care)' },
  { field: 'visit_date', form: 'visit', type: 'text', label: '访视日期 Visit date', validation: 'date_ymd', required: true },
  { field: 'sbp', form: 'visit', section: '诊室血压 Office blood pressure', type: 'text', label: '收缩压 Systolic BP (mmHg)', note: 'Mean of the last two of three seated readings', validation: 'integer', min: '60', max: '260', required: true },
  { field: 'dbp', form: 'visit', type: 'text', label: '舒张压 Diastolic BP (mmHg)', validation: 'integer', min: '30', max: '160', required: true },
  { field: 'weight_kg', form: 'visit', type: 'text', label: '体重 Weight (kg)', validation: 'number_1dp', min: '30', max: '250', required: true },
  { field: 'ae_occurred', form: 'visit', section: '不良事件 Adverse events', type: 'yesno', label: '自上次访视以来是否发生不良事件？Any adverse event since the last visit?' },
  { field: 'ae_term', form: 'visit', type: 'text', label: '不良事件名称 Adverse event term', branching: "[ae_occurred] = '1'" },
];

/** Expected adverse events of protocol section 7. */
export const DEMO_AE_TERMS = ['头痛 Headache', '头晕 Dizziness', '恶心 Nausea', '踝部水肿 Ankle oedema'] as const;

export type PlantedErrorKind = 'age_out_of_range' | 'consent_after_enrollment' | 'visit_out_of_window' | 'missing_required';

/** One deliberate error in the demo data, for a newcomer (and the tests) to see QC find it. */
export interface PlantedError {
  recordId: string;
  eventName: string;
  field: string;
  kind: PlantedErrorKind;
  detail: string;
}
