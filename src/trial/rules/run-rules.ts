import { performance } from 'node:perf_hooks';
import { errorMessage } from '../../core/errors.js';
import { processSlicer, type EventLoopSlicer } from './event-loop-slicer.js';
import type { CompiledLogic } from './rule-engine.js';
import type { HardRule, Violation } from './types.js';

export interface RunnableRule {
  rule: HardRule & { id: string };
  evaluate: CompiledLogic;
}

/**
 * Evaluates every rule against one record. A rule that throws becomes an error violation and the others
 * still run: one broken rule must not hide the findings of the rest.
 */
export function runRules(rules: readonly RunnableRule[], data: Record<string, unknown>): Violation[] {
  const violations: Violation[] = [];
  // Its own loop rather than evaluateRulesFrom with a pause that never comes: a call per rule less, on the hot path.
  for (let i = 0; i < rules.length; i++) evaluateRule(rules[i]!, data, violations);
  return violations;
}

/**
 * The same as runRules, letting the event loop turn whenever rule evaluation (this one and any other sharing the
 * slicer) has held it for a slice, so a server evaluating rules on hostile data still answers its other requests.
 * QC (the SOP engine) evaluates records this way.
 */
export async function runRulesInSlices(rules: readonly RunnableRule[], data: Record<string, unknown>, slicer: EventLoopSlicer = processSlicer): Promise<Violation[]> {
  const violations: Violation[] = [];
  let resumedAt = 0;
  const isPauseDue = () => {
    const now = performance.now();
    slicer.spend(now - resumedAt);
    resumedAt = now;
    return slicer.isSliceOver();
  };
  for (let next = 0; next < rules.length; ) {
    while (slicer.isSliceOver()) await slicer.nextTurn();
    resumedAt = performance.now();
    next = evaluateRulesFrom(rules, data, next, violations, isPauseDue);
    slicer.spend(performance.now() - resumedAt);
  }
  return violations;
}

/**
 * The one rule loop both runners use: evaluates the rules from index `from` on, adding their violations, and
 * returns early, with the index to resume at, when `isPauseDue` says the event loop should turn. The first rule
 * of a call always runs, so every call makes progress. (A loop that resumes by index rather than a generator:
 * a generator's `next()` per rule made `run` several times slower.)
 */
function evaluateRulesFrom(rules: readonly RunnableRule[], data: Record<string, unknown>, from: number, violations: Violation[], isPauseDue: () => boolean): number {
  for (let i = from; i < rules.length; i++) {
    if (i > from && isPauseDue()) return i;
    evaluateRule(rules[i]!, data, violations);
  }
  return rules.length;
}

/** One rule on one record: its violation (or the error it threw, as an error violation) is added to `violations`. */
function evaluateRule(runnable: RunnableRule, data: Record<string, unknown>, violations: Violation[]): void {
  let value: unknown;
  try {
    value = runnable.evaluate(data);
  } catch (error) {
    const { rule } = runnable;
    violations.push({ ruleId: rule.id, field: rule.field, message: `${evaluationErrorHead(rule.id)}: ${describeThrown(error)}`, severity: 'error', value: fieldValue(data, rule.field) });
    return;
  }
  // `true` first: most rules pass most records, and it skips the array check of JSON Logic truthiness.
  if (value === true || isTruthy(value)) return;
  const { rule } = runnable;
  violations.push({ ruleId: rule.id, field: rule.field, message: rule.message, severity: rule.severity ?? 'error', value: fieldValue(data, rule.field) });
}

function evaluationErrorHead(ruleId: string): string {
  return `Rule ${JSON.stringify(ruleId)} could not be evaluated`;
}

/**
 * The message of a rule that could not be evaluated, without the error's detail: an operator's error quotes what
 * it was given, which may be part of any field the rule read (`substr` of a birth date gives "1991"), not only the
 * field the query is raised on (trial/identifiers.ts withholds it then). Undefined when the message is not an
 * evaluation error.
 */
export function withoutEvaluationDetail(message: string): string | undefined {
  const match = /^(Rule "(?:[^"\\]|\\.)*" could not be evaluated): /.exec(message);
  return match ? `${match[1]} (its detail quoted part of an identifier value, so it is withheld)` : undefined;
}

/** JSON Logic truthiness (jsonlogic.com/truthy.html): an empty array is false, "0" and {} are true. */
function isTruthy(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : Boolean(value);
}

/**
 * The value a rule on `field` read, following dots as JSON Logic's `var` does (`v1_arm_1.age` is the age at
 * V1). Own properties only, so a rule on "constructor" reports null rather than Object's constructor function.
 */
export function fieldValue(data: Record<string, unknown>, field: string): unknown {
  if (Object.hasOwn(data, field)) return data[field] ?? null;
  let current: unknown = data;
  for (const part of field.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return null;
    current = (current as Record<string, unknown>)[part];
  }
  return current ?? null;
}

/** json-logic-engine throws plain objects such as `{type: 'Invalid Arguments'}`, not Errors. */
export function describeThrown(error: unknown): string {
  if (error instanceof Error) return errorMessage(error);
  if (error !== null && typeof error === 'object' && 'type' in error) {
    const { type, key } = error as { type: unknown; key?: unknown };
    return key === undefined ? String(type) : `${String(type)} "${String(key)}"`;
  }
  return String(error);
}
