export { assessRisk, levelOf, ADVICE, LEVEL_THRESHOLDS, POINTS, type RiskContext } from './assess-risk.js';
export { RED_FLAG_RULES, redFlagsOf, type RedFlagRule } from './red-flags.js';
export { readFindings, type Findings, type FindingsInput, type AbcdeCriterion } from './findings.js';
export { normaliseText, splitClauses, terms, affirms, mentions, deniesOnly, type TermSet } from './clinical-text.js';
export { patientInfoSchema, toPatientInfo, type PatientInfoArgs } from './patient-info-schema.js';
export { assessRiskTool, type AssessRiskArgs } from './tool.js';
export { LEVEL_GUIDANCE, LEAD_MARK, leadWithGuidance, withoutContradictions, type LevelGuidance } from './level-guidance.js';
