import { errorMessage } from '../../core/errors.js';
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
  for (const { rule, evaluate } of rules) {
    try {
      if (isTruthy(evaluate(data))) continue;
    } catch (error) {
      violations.push({ ruleId: rule.id, field: rule.field, message: `Rule could not be evaluated: ${describeThrown(error)}`, severity: 'error', value: fieldValue(data, rule.field) });
      continue;
    }
    violations.push({ ruleId: rule.id, field: rule.field, message: rule.message, severity: rule.severity ?? 'error', value: fieldValue(data, rule.field) });
  }
  return violations;
}

/** JSON Logic truthiness (jsonlogic.com/truthy.html): an empty array is false, "0" and {} are true. */
export function isTruthy(value: unknown): boolean {
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
