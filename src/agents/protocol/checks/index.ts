/** Edit checks from the protocol: eligibility and visit windows compiled into a QC skill, with its own tests. */
export { compileProtocolChecks, type CompileProtocolChecksOptions } from './compile-checks.js';
export { generateTestRecords } from './test-records.js';
export { verifyProtocolChecks, type HardRuleEngine } from './verify-checks.js';
export type {
  CheckSource,
  CheckVerification,
  CompiledProtocolChecks,
  CriterionTest,
  ProtocolCheck,
  ProtocolChecksVerification,
  SkillDefinition,
  SkillHardRule,
  SkippedCheck,
  TestRecord,
  VisitWindowTest,
} from './types.js';
