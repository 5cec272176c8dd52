import { parseIsoDate, type IsoDate } from './iso-date.js';
import { describeValue, OperatorError } from './operator-error.js';

/** An operator ClinAgent adds to JSON Logic for clinical checks (docs/rules.md documents each one). */
export interface ClinicalOperator {
  readonly name: string;
  /** Called with the evaluated arguments; throws OperatorError when they cannot be evaluated. */
  readonly evaluate: (args: unknown[]) => unknown;
  /**
   * Problems visible before any data arrives: wrong argument count, a literal argument that can never work.
   * Gets the arguments as written in the rule (operations not yet evaluated).
   */
  readonly checkArgs: (args: readonly unknown[]) => string[];
}

/** True when the argument is written as a value in the rule rather than computed by an operation. */
export function isLiteral(arg: unknown): boolean {
  return arg === null || typeof arg !== 'object';
}

export function arityProblems(args: readonly unknown[], min: number, max: number, usage: string): string[] {
  if (args.length >= min && args.length <= max) return [];
  const expected = min === max ? `${min}` : `${min} to ${max}`;
  return [`expects ${expected} arguments, got ${args.length}; write ${usage}`];
}

/** Problems with date arguments written as literals: they would fail on every record. */
export function literalDateProblems(args: readonly unknown[], positions: readonly number[]): string[] {
  return positions
    .filter((i) => i < args.length && isLiteral(args[i]) && parseIsoDate(args[i]) === null)
    .map((i) => `argument ${i + 1} ${describeValue(args[i])} is not an ISO date (YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss][Z|±hh:mm])`);
}

/**
 * The date at `args[index]`. A missing or invalid date throws instead of returning null: JSON Logic compares
 * null as 0 (`{"<=": [null, 0]}` is true), so a null day count would let a rule pass on missing data.
 */
export function requireDate(operator: string, args: readonly unknown[], index: number): IsoDate {
  const value = args[index];
  const date = parseIsoDate(value);
  if (date) return date;
  if (value === null || value === undefined || value === '') {
    throw new OperatorError(operator, `argument ${index + 1} is missing, so the rule cannot decide; guard it with "if" or "or" when the date may be absent`);
  }
  throw new OperatorError(operator, `argument ${index + 1} is not an ISO date (YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss][Z|±hh:mm]): ${describeValue(value)}`);
}
