export { runWithRetry, isNeedsHumanReview, NEEDS_HUMAN_REVIEW, type SoftRuleDeps, type SoftRuleOptions, type SoftRuleResult } from './run-with-retry.js';
export { SOFT_RULE_VERDICT, softRuleVerdictSchema, type SoftRuleVerdict } from './verdict.js';
export { SOFT_RULE_DEFINITION, type SoftRuleInput } from './definition.js';
