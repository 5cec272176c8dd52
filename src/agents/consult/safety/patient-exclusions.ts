import { exclusionReasons, readConstraints, readPatientWords, shippedFormulary, wordTerms, type ClassRule, type Formulary, type PatientConstraints } from '../medication/index.js';
import { normaliseText, type TermSet } from '../risk/clinical-text.js';
import type { MedicalContext, PatientInfo } from '../types.js';

/** A drug this patient must not be offered, the names it goes by, and why. */
export interface ExcludedDrug {
  /** The formulary's name, or the class member's name when the formulary does not list it ("minocycline"). */
  drug: string;
  /** Its generic, brand and Chinese names as one term set. */
  terms: TermSet;
  reasons: string[];
}

/**
 * Everything that rules a drug out for this patient, taken from the consult itself (the recorded medical context
 * and the patient's own words), never from what a model chose to pass to a tool.
 */
export interface PatientExclusions {
  /** The facts the exclusions rest on: what the trace shows and the dossier reports. */
  facts: { pregnant: boolean; breastfeeding: boolean; age?: number; allergies: string[]; deniesAllergies: boolean };
  /** The same facts as `patient_info`, for search_medication to merge with what the model passes. */
  patientInfo: PatientInfo;
  drugs: ExcludedDrug[];
}

const isYes = (value: unknown) => value === true || (typeof value === 'string' && /^(?:yes|true|y|是|有)$/i.test(value.trim()));

/** A model may write a list as one string or leave out entries; every string entry counts. */
function allergyList(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return list.filter((item): item is string => typeof item === 'string' && item.trim() !== '').map((item) => item.trim());
}

const NONE = /^(?:none|no|nil|n\/a|nkda|nka|无|没有|否认|no known (?:drug )?allergies)$/i;

function recordedPatientInfo(context: MedicalContext, said: readonly string[], formulary: Formulary) {
  const info = (context.patient_info ?? {}) as Record<string, unknown>;
  const words = readPatientWords(formulary, said);
  const recorded = allergyList(info.allergies);
  const age = typeof info.age === 'number' && Number.isFinite(info.age) && info.age >= 0 ? info.age : undefined;
  const patientInfo: PatientInfo = {
    ...(isYes(info.pregnant) || words.pregnant ? { pregnant: true } : {}),
    ...(isYes(info.breastfeeding) || words.breastfeeding ? { breastfeeding: true } : {}),
    ...(age !== undefined ? { age } : {}),
    allergies: [...recorded.filter((allergy) => !NONE.test(allergy)), ...words.allergies.map((allergy) => allergy.said)],
  };
  const named = [...recorded.filter((allergy) => !NONE.test(allergy)), ...words.allergies.flatMap((allergy) => allergy.names)];
  const allergies = [...new Map(named.map((name) => [normaliseText(name), name])).values()];
  // An empty list or "none" recorded by the model, or the patient's own denial, is an answer; no entry is not.
  const deniesAllergies = allergies.length === 0 && ((Array.isArray(info.allergies) && recorded.length === 0) || recorded.some((allergy) => NONE.test(allergy)) || words.deniesAllergies);
  return { patientInfo, facts: { pregnant: patientInfo.pregnant === true, breastfeeding: patientInfo.breastfeeding === true, age, allergies, deniesAllergies } };
}

function classRuleReasons(rule: ClassRule, patient: PatientConstraints): string[] {
  const note = (text: string, extra?: string) => (extra ? `${text} (${extra})` : text);
  const reasons: string[] = [];
  if (patient.pregnant && rule.pregnancy === 'avoid') reasons.push(note('avoid in pregnancy', rule.pregnancyNote));
  if (patient.breastfeeding && rule.breastfeeding === 'avoid') reasons.push(note('avoid while breastfeeding', rule.breastfeedingNote));
  if (patient.age !== undefined && rule.minAge !== undefined && patient.age < rule.minAge) reasons.push(note(`not for patients under ${rule.minAge} years`, rule.minAgeNote));
  return reasons;
}

/** Class id -> why the whole class is ruled out: an allergy, a cross-reaction, or a class rule. */
function excludedClasses(formulary: Formulary, patient: PatientConstraints): Map<string, string[]> {
  const classes = new Map<string, string[]>();
  const add = (id: string, reason: string) => classes.set(id, [...new Set([...(classes.get(id) ?? []), reason])]);
  for (const [id, said] of patient.allergyClasses) add(id, normaliseText(said).includes(id) ? `${id} allergy` : `${id} allergy (stated as "${said}")`);
  for (const rule of formulary.crossReactivity) if (patient.allergyClasses.has(rule.allergy)) add(rule.excludes, rule.reason);
  for (const rule of formulary.classRules) for (const reason of classRuleReasons(rule, patient)) add(rule.class, reason);
  return classes;
}

/**
 * This patient's excluded drugs: every formulary drug search_medication would refuse, and every member of an
 * excluded class by the class's words (allergyClasses), so "minocycline" is caught in pregnancy though the
 * formulary lists only doxycycline. A class word that is also a formulary drug's name is judged by that drug's own
 * entry, which knows more (a topical form, its own age limit).
 */
export function patientExclusions(context: MedicalContext, said: readonly string[], formulary: Formulary = shippedFormulary()): PatientExclusions {
  const { patientInfo, facts } = recordedPatientInfo(context, said, formulary);
  const patient = readConstraints(formulary, [], patientInfo);
  const drugs: ExcludedDrug[] = [];
  const formularyNames = new Set<string>();
  for (const drug of formulary.drugs) {
    const names = [drug.name, ...drug.aliases];
    for (const name of names) formularyNames.add(normaliseText(name));
    const reasons = exclusionReasons(drug, patient, formulary);
    if (reasons.length) drugs.push({ drug: drug.name, terms: wordTerms(drug.name, names), reasons });
  }
  for (const [id, reasons] of excludedClasses(formulary, patient)) {
    for (const word of formulary.allergyClasses[id] ?? []) {
      if (formularyNames.has(normaliseText(word))) continue;
      drugs.push({ drug: word, terms: wordTerms(word, [word]), reasons });
    }
  }
  return { facts, patientInfo, drugs };
}
