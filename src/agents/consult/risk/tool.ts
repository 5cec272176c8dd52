import { z } from 'zod';
import type { ToolDefinition } from '../../../core/tools/registry.js';
import type { RiskAssessment } from '../types.js';
import { assessRisk } from './assess-risk.js';
import { patientInfoSchema, toPatientInfo } from './patient-info-schema.js';

const assessRiskArgs = z.object({
  symptoms: z
    .array(z.string().min(1))
    .min(1, 'list at least one symptom, e.g. ["红疹", "瘙痒"] or ["fever", "rash all over"]')
    .describe('the symptoms as the patient described them, one per item, Chinese or English'),
  patient_info: patientInfoSchema.default({}).describe('what is known about the patient'),
  duration: z.string().optional().describe('how long it has lasted, e.g. "3 days", "两个月"'),
  location: z.array(z.string()).optional().describe('where on the body, e.g. ["face", "躯干"]'),
});

/** seed 003 `assess_risk(symptoms, patient_info)`: the deterministic triage of assess-risk.ts. */
export function assessRiskTool(): ToolDefinition<z.output<typeof assessRiskArgs>> {
  return {
    name: 'assess_risk',
    description:
      'Assess how urgent the skin problem is, deterministically: returns risk_level (low, moderate, high, urgent), a score 0-100, the red flags found (fever with a widespread or blistering rash, mucosal sores, a changing mole, spreading painful redness with fever, facial swelling or breathing trouble) and advice. Symptoms in Chinese or English; negated symptoms ("no fever", "没有发烧") do not count.',
    schema: assessRiskArgs,
    run: ({ symptoms, patient_info, duration, location }): RiskAssessment =>
      assessRisk(symptoms, toPatientInfo(patient_info), { duration, location }),
  };
}
