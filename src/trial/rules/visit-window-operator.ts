import { arityProblems, isLiteral, literalDateProblems, requireDate, type ClinicalOperator } from './clinical-operator.js';
import { daysBetween } from './date-operators.js';
import { describeValue, OperatorError } from './operator-error.js';

const NAME = 'in_window';
const USAGE = '{"in_window": [actualDate, anchorDate, targetDay, daysBefore, daysAfter]}';

/**
 * Visit-window check: [actual, anchor, targetDay, daysBefore, daysAfter?] is true when the actual date falls
 * on anchor + targetDay, up to daysBefore earlier or daysAfter later (daysAfter defaults to daysBefore).
 * The anchor is day 0 (V2 "day 28 ± 3 from enrolment" is [v2, enrolment, 28, 3, 3]); days are calendar days
 * as in date_diff_days.
 */
export const inWindow: ClinicalOperator = {
  name: NAME,
  evaluate: (args) => {
    const day = daysBetween(requireDate(NAME, args, 1), requireDate(NAME, args, 0));
    const target = requireNumber(args, 2, false);
    const before = requireNumber(args, 3, true);
    const after = args.length > 4 ? requireNumber(args, 4, true) : before;
    return day >= target - before && day <= target + after;
  },
  checkArgs: (args) => [
    ...arityProblems(args, 4, 5, USAGE),
    ...literalDateProblems(args, [0, 1]),
    ...[2, 3, 4].filter((i) => i < args.length && isLiteral(args[i]) && numberProblem(args[i], i > 2)).map(
      (i) => `argument ${i + 1} ${describeValue(args[i])} ${numberProblem(args[i], i > 2)}`,
    ),
  ],
};

function numberProblem(value: unknown, isWindow: boolean): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number of days';
  if (isWindow && value < 0) return 'must not be negative: a window extends from the target day';
  return undefined;
}

function requireNumber(args: readonly unknown[], index: number, isWindow: boolean): number {
  const problem = numberProblem(args[index], isWindow);
  if (problem) throw new OperatorError(NAME, `argument ${index + 1} ${describeValue(args[index])} ${problem}`);
  return args[index] as number;
}
