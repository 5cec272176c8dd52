import { z } from 'zod';
import type { ToolDefinition } from '../../../core/tools/registry.js';
import { patientInfoSchema, toPatientInfo } from '../risk/patient-info-schema.js';
import type { MedicationSearch } from '../types.js';
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

export type SearchMedicationArgs = z.input<typeof searchMedicationArgs>;

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
