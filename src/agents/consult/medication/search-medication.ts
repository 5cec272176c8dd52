import { normaliseText } from '../risk/clinical-text.js';
import type { MedicationOption, MedicationSearch, PatientInfo } from '../types.js';
import { readConstraints, type PatientConstraints } from './contraindications.js';
import { shippedFormulary, type Formulary, type FormularyDrug } from './formulary.js';

/**
 * seed 003 `search_medication(condition, contraindications)`: the formulary's drugs for a condition, filtered
 * deterministically. A drug marked 'avoid' for pregnancy or breastfeeding, under its minimum age, or in an allergy
 * class of the patient (directly or through cross-reactivity) is never offered, and `warnings` names each excluded
 * drug with every reason; 'caution' keeps the drug and says why in its notes and in `warnings`.
 *
 * Conditions match by name, English or Chinese, case-insensitively: a condition matches when one of its names
 * appears in the query ("acne vulgaris on the face" finds acne). When one matched name lies inside another matched
 * name, only the longer counts, so "玫瑰痤疮" (rosacea) does not also find 痤疮 (acne) and "牛皮癣" (psoriasis) does
 * not find 癣 (tinea). When no name appears in the query, a query that is itself part of a name ("eczem",
 * "dermatitis") finds those conditions.
 */

const MIN_PARTIAL_QUERY = 3;

interface NameHit {
  id: string;
  start: number;
  end: number;
}

export function matchConditions(formulary: Formulary, condition: string): string[] {
  const query = normaliseText(condition).trim();
  if (query === '') return [];
  const hits: NameHit[] = [];
  for (const [id, { names }] of Object.entries(formulary.conditions)) {
    for (const name of names) {
      const needle = normaliseText(name);
      for (let at = query.indexOf(needle); at >= 0; at = query.indexOf(needle, at + 1)) hits.push({ id, start: at, end: at + needle.length });
    }
  }
  const outer = hits.filter((hit) => !hits.some((other) => other !== hit && other.start <= hit.start && other.end >= hit.end && other.end - other.start > hit.end - hit.start));
  if (outer.length) return [...new Set(outer.map((hit) => hit.id))];
  if ([...query].length < MIN_PARTIAL_QUERY && !/\p{Script=Han}/u.test(query)) return [];
  return Object.entries(formulary.conditions)
    .filter(([, { names }]) => names.some((name) => normaliseText(name).includes(query)))
    .map(([id]) => id);
}

function formatAge(years: number): string {
  if (years < 1) {
    const months = Math.round(years * 12);
    return `${months} month${months === 1 ? '' : 's'}`;
  }
  const rounded = Math.round(years * 10) / 10;
  return `${rounded} year${rounded === 1 ? '' : 's'}`;
}

const withNote = (text: string, note: string | undefined) => (note ? `${text} (${note})` : text);

/** Why `drug` may not be offered to this patient; empty when it may. */
export function exclusionReasons(drug: FormularyDrug, patient: PatientConstraints, formulary: Formulary): string[] {
  const reasons: string[] = [];
  if (patient.pregnant && drug.pregnancy === 'avoid') reasons.push(withNote('avoid in pregnancy', drug.pregnancyNote));
  if (patient.breastfeeding && drug.breastfeeding === 'avoid') reasons.push(withNote('avoid while breastfeeding', drug.breastfeedingNote));
  if (patient.age !== undefined && patient.age < drug.minAge) {
    reasons.push(withNote(`not for patients under ${formatAge(drug.minAge)}; the patient is ${formatAge(patient.age)}`, drug.minAgeNote));
  }
  const said = patient.drugAllergies.get(drug.name);
  if (said !== undefined) reasons.push(`the patient is allergic to it ("${said}")`);
  for (const id of drug.allergyClasses) {
    const allergy = patient.allergyClasses.get(id);
    if (allergy !== undefined && said === undefined) {
      reasons.push(normaliseText(allergy).includes(id) ? `${id} allergy` : `${id} allergy (stated as "${allergy}")`);
    }
  }
  for (const rule of formulary.crossReactivity) {
    if (patient.allergyClasses.has(rule.allergy) && drug.allergyClasses.includes(rule.excludes) && !patient.allergyClasses.has(rule.excludes)) {
      reasons.push(rule.reason);
    }
  }
  return [...new Set(reasons)];
}

function cautions(drug: FormularyDrug, patient: PatientConstraints): string[] {
  const found: string[] = [];
  if (patient.pregnant && drug.pregnancy === 'caution') found.push(withNote('caution in pregnancy', drug.pregnancyNote));
  if (patient.breastfeeding && drug.breastfeeding === 'caution') found.push(withNote('caution while breastfeeding', drug.breastfeedingNote));
  return found;
}

const ADULT_AGE = 18;

export function searchMedication(
  condition: string,
  contraindications: readonly string[],
  patientInfo: PatientInfo = {},
  formulary: Formulary = shippedFormulary(),
): MedicationSearch {
  const patient = readConstraints(formulary, contraindications, patientInfo);
  const conditionIds = matchConditions(formulary, condition);
  if (conditionIds.length === 0) {
    // One English and one Chinese name each: enough for the model to retry with a name the formulary knows.
    const known = Object.values(formulary.conditions).map(({ names }) => [names[0], names.find((name) => /\p{Script=Han}/u.test(name))].filter(Boolean).join('/'));
    return {
      medications: [],
      warnings: [
        `No drug in the formulary is listed for "${condition}". Known conditions: ${known.join('; ')}. Do not suggest a drug for it from memory: refer the patient to a doctor.`,
        ...patient.warnings,
      ],
    };
  }

  const medications: MedicationOption[] = [];
  const excluded: string[] = [];
  const cautionWarnings: string[] = [];
  for (const drug of formulary.drugs) {
    if (!drug.conditions.some((id) => conditionIds.includes(id))) continue;
    const reasons = exclusionReasons(drug, patient, formulary);
    if (reasons.length) {
      excluded.push(`${drug.name} excluded: ${reasons.join('; ')}.`);
      continue;
    }
    const drugCautions = cautions(drug, patient);
    for (const caution of drugCautions) cautionWarnings.push(`${drug.name}: ${caution}.`);
    const notes = [...drugCautions.map((caution) => `${caution[0]!.toUpperCase()}${caution.slice(1)}.`), drug.notes].filter((note): note is string => Boolean(note));
    medications.push({ name: drug.name, class: drug.class, route: drug.route, dosage: drug.dosage, ...(notes.length ? { notes: notes.join(' ') } : {}) });
  }

  const warnings = [...excluded, ...cautionWarnings, ...patient.warnings];
  if (medications.length === 0) {
    warnings.push(`Every formulary drug for "${condition}" is contraindicated for this patient: refer the patient to a doctor instead of suggesting a drug.`);
  }
  if (patient.age !== undefined && patient.age < ADULT_AGE && medications.length > 0) {
    warnings.push(`The dosages are for adults; the patient is ${formatAge(patient.age)}, and a child's dose depends on age and weight: a prescriber must set it.`);
  }
  return { medications, warnings };
}
