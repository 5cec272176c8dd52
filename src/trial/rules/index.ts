/** Hard rules: JSON Logic checks of trial records, compiled once, with clinical date and pattern operators. */
export type { Severity, HardRule, Violation, CompiledRules } from './types.js';
export { compileRules, type CompileRulesOptions } from './compile-rules.js';
export { createRuleEngine, type RuleEngine, type CompiledLogic } from './rule-engine.js';
export { checkLogic, logicFieldReferences, type FieldReference, type LogicProblem } from './check-logic.js';
export { parseIsoDate, type IsoDate } from './iso-date.js';
export { OperatorError } from './operator-error.js';
export { MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE, MAX_VALUE_LENGTH } from './matches-operator.js';
export { MAX_MATCHING_STEPS_PER_RULE } from './matching-budget.js';
