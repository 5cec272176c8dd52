import { Constants, LogicEngine } from 'json-logic-engine';
import type { ClinicalOperator } from './clinical-operator.js';
import { dateAfter, dateBefore, dateDiffDays, dateOnOrAfter, dateOnOrBefore, isDate } from './date-operators.js';
import { decimalRound } from './decimal-round-operator.js';
import { createMatchesOperator } from './matches-operator.js';
import { createMatchingBudget } from './matching-budget.js';
import { missingOfKeys, specMissing, specMissingSome } from './missing-operators.js';
import { isNumber } from './number-operators.js';
import { inWindow } from './visit-window-operator.js';

/** A compiled JSON Logic expression: evaluates it against one record. */
export type CompiledLogic = (data: unknown) => unknown;

/** json-logic-engine with ClinAgent's clinical operators registered; one per compileRules call or shared. */
export interface RuleEngine {
  /** The underlying engine; evaluate through `compile`, which gives `matches` its budget for each evaluation. */
  readonly logic: LogicEngine;
  /** Every operator a rule may use (standard and clinical), sorted, for compile errors. */
  readonly operatorNames: readonly string[];
  readonly clinicalOperators: ReadonlyMap<string, ClinicalOperator>;
  /**
   * Compiles once with json-logic-engine's `build` (generated JavaScript); throws on an unknown operator. Each
   * call of the result is one rule evaluation, with a fresh pattern-matching budget (matching-budget.ts).
   */
  compile(logic: unknown): CompiledLogic;
}

export function createRuleEngine(): RuleEngine {
  // The default configuration passes the whole official JSON Logic suite (jsonlogic-conformance.test.ts);
  // in particular permissive stays off, so an object with an unknown key is an error rather than data.
  const logic = new LogicEngine();
  // One budget for the engine is enough: an evaluation runs to its end before the next starts (one thread).
  const budget = createMatchingBudget();
  const operators = [dateDiffDays, dateBefore, dateAfter, dateOnOrBefore, dateOnOrAfter, inWindow, isDate, isNumber, decimalRound, createMatchesOperator(budget)];
  for (const operator of operators) {
    if (operator.name in logic.methods) throw new Error(`clinical operator ${operator.name} would shadow a json-logic-engine operator`);
    // deterministic: pure functions of their arguments, so the compiler may evaluate all-literal calls once at build
    // time. (The budget of `matches` decides whether it answers, never what: the same arguments give the same answer.)
    logic.addMethod(operator.name, (args: unknown[]) => operator.evaluate(args), { deterministic: true });
  }
  // Replaced on purpose: see missing-operators.ts for why json-logic-engine's own versions are wrong for QC.
  // A literal key list (the usual required-field rule) compiles to a check over those keys, called directly by the
  // generated code; anything else (keys computed by an expression) goes through the general method.
  logic.addMethod('missing', {
    method: (args: unknown, context: unknown) => specMissing(args, context),
    compile: (keys: unknown, buildState: { compile(strings: TemplateStringsArray, ...items: unknown[]): unknown }) =>
      Array.isArray(keys) && keys.every((key) => typeof key === 'string') ? buildState.compile`${Object.assign(missingOfKeys(keys), { [Constants.Sync]: true })}(context)` : false,
  } as never, { deterministic: false, optimizeUnary: false } as never);
  logic.addMethod('missing_some', (args: unknown, context: unknown) => specMissingSome(args, context), { deterministic: false, optimizeUnary: false } as never);
  return {
    logic,
    operatorNames: Object.keys(logic.methods as Record<string, unknown>).sort(),
    clinicalOperators: new Map(operators.map((operator) => [operator.name, operator])),
    compile: (expression) => {
      // build may evaluate all-literal operations at once (deterministic), so it starts with a full budget too.
      budget.reset();
      const evaluate = logic.build(expression) as CompiledLogic;
      // Only `matches` spends the budget; other rules are called bare, which halves the cost of a cheap rule.
      if (!needsBudget(expression)) return evaluate;
      return (data) => {
        budget.reset();
        return evaluate(data);
      };
    },
  };
}

/** Operators whose evaluation spends the matching budget; a rule using one is evaluated alone with a fresh budget. */
const BUDGETED_OPERATORS = new Set(['matches']);

function needsBudget(expression: unknown): boolean {
  if (Array.isArray(expression)) return expression.some(needsBudget);
  if (expression === null || typeof expression !== 'object') return false;
  for (const [key, value] of Object.entries(expression)) if (BUDGETED_OPERATORS.has(key) || needsBudget(value)) return true;
  return false;
}
