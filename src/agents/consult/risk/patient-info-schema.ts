import { z } from 'zod';
import type { PatientInfo } from '../types.js';

/**
 * `patient_info` as the consult's tools accept it from a model (seed 003: a dict). Extra keys pass through, since
 * the model keeps its own medical context; sex is free text ("女", "F") and read by `toPatientInfo`, so a model
 * writing Chinese is not refused over a label.
 */
export const patientInfoSchema = z
  .object({
    age: z.number().min(0, 'age is in years and cannot be negative').max(130, 'age is in years (at most 130)').optional().describe('age in years; months as a fraction (6 months = 0.5)'),
    sex: z.string().optional().describe('female, male or other'),
    pregnant: z.boolean().optional(),
    breastfeeding: z.boolean().optional(),
    allergies: z.array(z.string()).optional().describe('drug or class names, e.g. ["penicillin", "磺胺"]'),
  })
  .passthrough();

type PatientInfoArgs = z.infer<typeof patientInfoSchema>;

const FEMALE = new Set(['female', 'f', 'woman', 'girl', '女', '女性', '女士']);
const MALE = new Set(['male', 'm', 'man', 'boy', '男', '男性', '先生']);
const OTHER = new Set(['other', '其他']);

function sexOf(value: string | undefined): PatientInfo['sex'] {
  const key = value?.normalize('NFKC').trim().toLowerCase() ?? '';
  if (FEMALE.has(key)) return 'female';
  if (MALE.has(key)) return 'male';
  if (OTHER.has(key)) return 'other';
  return undefined;
}

export function toPatientInfo(args: PatientInfoArgs | undefined): PatientInfo {
  if (!args) return {};
  const { sex, ...rest } = args;
  const info: PatientInfo = { ...rest };
  const known = sexOf(sex);
  if (known) info.sex = known;
  return info;
}
