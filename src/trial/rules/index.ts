/** Hard rules: JSON Logic checks of trial records, compiled once, with clinical date and pattern operators. */
export type { Severity, HardRule, Violation, CompiledRules } from './types.js';
export { compileRules } from './compile-rules.js';
export { createRuleEngine, type RuleEngine } from './rule-engine.js';
export { logicFieldReferences } from './check-logic.js';
export { MAX_VALUE_LENGTH } from './matches-operator.js';
export { MAX_MATCHING_STEPS_PER_RULE } from './matching-budget.js';
