import type { MedicalContext, MedicationOption, MedicationSearch, RedFlag, RiskAssessment, RiskLevel } from '../types.js';
import type { PatientExclusions } from '../safety/patient-exclusions.js';
import { withoutExcludedDrugs } from '../safety/without-excluded-drugs.js';
import { redactIdentifierText, withoutIdentifierKeys } from '../safety/identifiers.js';

/** What a dossier is made from: the consult's own state, what the model passed, and when it was made. */
export interface DossierInput {
  title: string;
  medicalContext: MedicalContext;
  risk: RiskAssessment;
  turns: Array<{ role: string; content: string }>;
  diagnosis?: { summary: string; ready_reason?: string };
  medications?: MedicationSearch;
  imageFindings?: string[];
  /** `generate_medical_dossier`'s `patient_data`, as the model wrote it. */
  patientData?: Record<string, unknown>;
  /** This patient's excluded drugs (safety/): none may stand in the record, and the allergies they rest on are listed. */
  exclusions?: PatientExclusions;
  createdAt: Date;
}

/**
 * The structured record of a consult, stored as JSON and rendered to Markdown and DOCX (export.ts). Snake_case,
 * as the seed's tool interface names its fields; `null` where nothing was recorded, so a reader of the JSON can
 * tell "not recorded" from a missing key.
 */
export interface DossierContent {
  title: string;
  created_at: string;
  chief_complaint: string | null;
  history: { symptoms: string[]; location: string[]; duration: string | null; triggers: string[]; missing_info: string[] };
  patient: {
    age: number | string | null;
    sex: string | null;
    pregnant: boolean | null;
    breastfeeding: boolean | null;
    allergies: string[];
    /** `listed`: allergies above; `none`: the patient said, or the record says, there are none; `not_recorded`: nobody asked. */
    allergy_status: 'listed' | 'none' | 'not_recorded';
  };
  examination: { image_findings: string[] };
  risk: { level: RiskLevel; score: number; red_flags: RedFlag[]; advice: string };
  assessment: { suspected_conditions: string[]; diagnosis_summary: string | null; ready_reason: string | null };
  plan: { medications: MedicationOption[]; warnings: string[] };
  /** What else the consult recorded (medical context, patient_info and patient_data keys not placed above), as text. */
  additional_information: Record<string, string>;
  transcript: Array<{ role: string; content: string }>;
  disclaimer: string;
}

const DOSSIER_DISCLAIMER =
  'This record was produced by an AI consultation assistant from what the patient reported and, where images were sent, from an automated image analysis. ' +
  'It is not a medical diagnosis by a clinician. A doctor should examine the patient before any diagnosis or treatment is decided; seek care at once if symptoms get worse.';

/**
 * The medical context and patient_data are open JSON written by a model: a list may arrive as one sentence, a flag
 * as "yes". Every value is read defensively and shown as text rather than dropped or failing the dossier.
 */
function plain(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(plain).filter(Boolean).join('; ');
  if (typeof value === 'object') return Object.entries(value).map(([key, inner]) => `${humanLabel(key)}: ${plain(inner)}`).join('; ');
  return String(value).trim();
}

const textOrNull = (value: unknown): string | null => plain(value) || null;

/** A list as written, a single value as a list of one; blanks dropped. */
const textList = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).map(plain).filter((item) => item !== '');

/** Both lists in order, each entry once (compared without case), so the consult's state and patient_data merge. */
function union(...lists: string[][]): string[] {
  const seen = new Set<string>();
  return lists.flat().filter((item) => {
    const key = item.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `skin_type` -> "Skin type"; keys in other scripts are shown as written. */
function humanLabel(key: string): string {
  const spaced = key.replace(/[_-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').trim().toLowerCase();
  return spaced.replace(/^./, (first) => first.toUpperCase());
}

const YES = /^(yes|y|true|是|有|怀孕|哺乳)$/i;
/** An allergy entry that says there is none. */
const NO_ALLERGY = /^(?:none|no|nil|n\/a|nkda|nka|无|没有|否认|no known (?:drug )?allergies|无过敏史)$/i;
const NO = /^(no|n|false|否|无|没有|不是)$/i;

function flag(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  const text = plain(value);
  return YES.test(text) ? true : NO.test(text) ? false : null;
}

function age(value: unknown): number | string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return textOrNull(value);
}

const asObject = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** patient_data and patient_info keys the dossier places in its own sections; anything else is additional information. */
const PATIENT_KEYS = ['age', 'sex', 'gender', 'pregnant', 'breastfeeding', 'allergies'];
const PLACED_KEYS = new Set([...PATIENT_KEYS, 'patient_info', 'chief_complaint', '主诉', 'symptoms', 'location', 'duration', 'triggers', 'missing_info', 'image_findings', 'suspected_conditions', 'diagnosis']);

/** Replaces identifier-looking text in every string of the record (see identifiers.ts). */
function redactStrings<T>(value: T): T {
  if (typeof value === 'string') return redactIdentifierText(value) as T;
  if (Array.isArray(value)) return value.map(redactStrings) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactStrings(inner)])) as T;
}

/**
 * The dossier of a consult. Its own state comes first: the medical context is what the safety check read, so a
 * value the model passes in patient_data only fills what the context lacks; lists (symptoms, allergies) are merged,
 * so an allergy the model mentions only in patient_data is never lost.
 *
 * No identifiers: keys that name a name, phone, ID number, address or e-mail (patient_full_name, home_phone,
 * identity_card, 姓名, 联系电话...) and values that are nothing but one are dropped from patient_data and the medical
 * context before anything is read, and identifier-looking text is replaced everywhere (identifiers.ts), because the
 * dossier goes back to the model, into the trace and out as a file.
 */
export function buildDossier(input: DossierInput): DossierContent {
  const content = redactStrings(recordOf(input));
  return input.exclusions ? withoutExcluded(content, input.exclusions) : content;
}

/**
 * The record with no excluded drug in what the consult wrote (assessment, plan, findings, additional information,
 * its own turns of the transcript): a sentence naming one becomes the same warning the reply got, an offered drug
 * now excluded (the patient mentioned a pregnancy after it was offered) leaves the plan with the reason. The
 * patient's own words and the allergy list stay as they are: they are what the exclusions rest on.
 */
function withoutExcluded(content: DossierContent, exclusions: PatientExclusions): DossierContent {
  const check = (text: string) => withoutExcludedDrugs(text, exclusions).text;
  const checkOrNull = (text: string | null) => (text === null ? null : check(text));
  const medications = content.plan.medications.filter((drug) => withoutExcludedDrugs(drug.name, exclusions).removed.length === 0);
  const dropped = content.plan.medications
    .filter((drug) => !medications.includes(drug))
    .map((drug) => `${drug.name} removed from the plan: ${withoutExcludedDrugs(drug.name, exclusions).removed[0]!.reason}.`);
  return {
    ...content,
    examination: { image_findings: content.examination.image_findings.map(check) },
    assessment: {
      suspected_conditions: content.assessment.suspected_conditions.map(check),
      diagnosis_summary: checkOrNull(content.assessment.diagnosis_summary),
      ready_reason: checkOrNull(content.assessment.ready_reason),
    },
    plan: { medications, warnings: [...content.plan.warnings, ...dropped] },
    additional_information: Object.fromEntries(Object.entries(content.additional_information).map(([label, value]) => [label, check(value)])),
    transcript: content.transcript.map((turn) => (turn.role === 'user' ? turn : { ...turn, content: check(turn.content) })),
  };
}

function recordOf(input: DossierInput): DossierContent {
  const context = withoutIdentifierKeys(input.medicalContext ?? {}) as MedicalContext;
  const data = asObject(withoutIdentifierKeys(input.patientData ?? {}));
  const contextPatient = asObject(context.patient_info);
  const dataPatient = { ...data, ...asObject(data.patient_info) };
  const patientValue = (key: string) => contextPatient[key] ?? dataPatient[key];

  const additional: Record<string, string> = {};
  const sources = [context, contextPatient, asObject(data.patient_info), data];
  for (const [key, value] of sources.flatMap((source) => Object.entries(source))) {
    const shown = plain(value);
    // The consult's own value wins: it comes first, and a later one under the same label is left out.
    if (PLACED_KEYS.has(key) || !shown || additional[humanLabel(key)] !== undefined) continue;
    additional[humanLabel(key)] = shown;
  }

  const firstUserTurn = input.turns.find((turn) => turn.role === 'user' && turn.content.trim() !== '');
  const symptoms = union(textList(context.symptoms), textList(data.symptoms));
  const facts = input.exclusions?.facts;
  const allergies = union(textList(contextPatient.allergies), textList(dataPatient.allergies), facts?.allergies ?? []).filter((allergy) => !NO_ALLERGY.test(allergy));
  // An empty list or "none" in the record, or the patient's own denial, is an answer; a missing entry is not.
  const saysNone = Array.isArray(contextPatient.allergies) || [...textList(contextPatient.allergies), ...textList(dataPatient.allergies)].some((allergy) => NO_ALLERGY.test(allergy)) || facts?.deniesAllergies === true;
  const fromWords = (value: boolean | null, said: boolean | undefined) => value ?? (said ? true : null);

  return {
    title: input.title,
    created_at: input.createdAt.toISOString(),
    // The model's own summary when it wrote one; else the patient's first words, which is what a chief complaint is.
    chief_complaint: textOrNull(data.chief_complaint ?? data['主诉']) ?? textOrNull(firstUserTurn?.content) ?? (symptoms.length ? symptoms.join(', ') : null),
    history: {
      symptoms,
      location: union(textList(context.location), textList(data.location)),
      duration: textOrNull(context.duration) ?? textOrNull(data.duration),
      triggers: union(textList(context.triggers), textList(data.triggers)),
      missing_info: textList(context.missing_info),
    },
    patient: {
      age: age(patientValue('age')),
      sex: textOrNull(patientValue('sex') ?? patientValue('gender')),
      pregnant: fromWords(flag(patientValue('pregnant')), facts?.pregnant),
      breastfeeding: fromWords(flag(patientValue('breastfeeding')), facts?.breastfeeding),
      allergies,
      allergy_status: allergies.length ? 'listed' : saysNone ? 'none' : 'not_recorded',
    },
    examination: { image_findings: union(input.imageFindings ?? [], textList(context.image_findings), textList(data.image_findings)) },
    risk: { level: input.risk.risk_level, score: input.risk.score, red_flags: input.risk.red_flags, advice: input.risk.advice },
    assessment: {
      suspected_conditions: union(textList(context.suspected_conditions), textList(data.suspected_conditions)),
      diagnosis_summary: textOrNull(input.diagnosis?.summary) ?? textOrNull(data.diagnosis),
      ready_reason: textOrNull(input.diagnosis?.ready_reason),
    },
    plan: { medications: input.medications?.medications ?? [], warnings: input.medications?.warnings ?? [] },
    additional_information: additional,
    transcript: input.turns.filter((turn) => turn.content.trim() !== '').map((turn) => ({ role: turn.role, content: turn.content })),
    disclaimer: DOSSIER_DISCLAIMER,
  };
}
