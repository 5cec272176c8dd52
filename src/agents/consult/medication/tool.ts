import { z } from 'zod';
import type { ToolDefinition } from '../../../core/tools/registry.js';
import { patientInfoSchema, toPatientInfo } from '../risk/patient-info-schema.js';
import type { MedicationSearch, PatientInfo } from '../types.js';
import { shippedFormulary, type Formulary } from './formulary.js';
import { searchMedication } from './search-medication.js';

const searchMedicationArgs = z.object({
  condition: z.string().trim().min(1, 'name the condition, e.g. "acne" or "湿疹"').describe('the condition to treat, English or Chinese, e.g. "acne", "湿疹", "tinea"'),
  contraindications: z
    .array(z.string())
    .default([])
    .describe('everything that may rule a drug out: "pregnant", "breastfeeding", "penicillin allergy", "磺胺过敏", "age 5"'),
  patient_info: patientInfoSchema.optional().describe('what is known about the patient; pregnancy, breastfeeding, age and allergies are applied too'),
});

/** seed 003 `search_medication(condition, contraindications)` over the shipped formulary (or the one given). */
export function searchMedicationTool(formulary: Formulary = shippedFormulary()): ToolDefinition<z.output<typeof searchMedicationArgs>> {
  return {
    name: 'search_medication',
    description:
      'Find drugs for a skin condition in the shipped formulary, filtered by contraindications (pregnancy, breastfeeding, allergies including cross-reactive classes, age). Returns medications (name, class, route, adult dosage, notes) and warnings naming every excluded drug and why. Only suggest drugs this tool returns, and pass on its warnings.',
    schema: searchMedicationArgs,
    run: ({ condition, contraindications, patient_info }): MedicationSearch =>
      searchMedication(condition, contraindications, toPatientInfo(patient_info), formulary),
  };
}

/** The patient as the model described it, with what the consult itself recorded added: a flag either sets, every allergy, the youngest age. */
function mergePatientInfo(fromModel: PatientInfo, recorded: PatientInfo): PatientInfo {
  const ages = [fromModel.age, recorded.age].filter((age): age is number => typeof age === 'number');
  return {
    ...fromModel,
    ...(fromModel.pregnant === true || recorded.pregnant === true ? { pregnant: true } : {}),
    ...(fromModel.breastfeeding === true || recorded.breastfeeding === true ? { breastfeeding: true } : {}),
    ...(ages.length ? { age: Math.min(...ages) } : {}),
    allergies: [...new Set([...(fromModel.allergies ?? []), ...(recorded.allergies ?? [])])],
  };
}

/** What the consult's record added to the model's arguments, in words the model can pass on. */
function appliedFromRecord(fromModel: PatientInfo, recorded: PatientInfo): string[] {
  const applied: string[] = [];
  if (recorded.pregnant && fromModel.pregnant !== true) applied.push('pregnant');
  if (recorded.breastfeeding && fromModel.breastfeeding !== true) applied.push('breastfeeding');
  if (recorded.age !== undefined && fromModel.age === undefined) applied.push(`age ${recorded.age}`);
  for (const allergy of recorded.allergies ?? []) if (!(fromModel.allergies ?? []).includes(allergy)) applied.push(`allergy: ${allergy}`);
  return applied;
}

/**
 * `search_medication` bound to one consult: whatever contraindications and patient_info the model passes, the
 * consult's recorded pregnancy, breastfeeding, age and allergies (its medical context and the patient's own words,
 * `recorded()` at call time) are applied too, so leaving them out excludes nothing less. `applied_from_record`
 * tells the model what it left out.
 */
export function consultMedicationTool(recorded: () => PatientInfo, formulary: Formulary = shippedFormulary()): ToolDefinition<z.output<typeof searchMedicationArgs>> {
  const shared = searchMedicationTool(formulary);
  return {
    ...shared,
    run({ condition, contraindications, patient_info }) {
      const fromModel = toPatientInfo(patient_info);
      const record = recorded();
      const result = searchMedication(condition, contraindications, mergePatientInfo(fromModel, record), formulary);
      const applied = appliedFromRecord(fromModel, record);
      return applied.length ? { ...result, applied_from_record: applied } : result;
    },
  };
}
