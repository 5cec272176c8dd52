import { arityProblems, isLiteral, type ClinicalOperator } from './clinical-operator.js';
import { describeValue, OperatorError } from './operator-error.js';

/** How `decimal_round` settles the digits it drops. */
type RoundingMode = 'half_away' | 'up' | 'down';
const MODES: readonly RoundingMode[] = ['half_away', 'up', 'down'];
const MAX_PLACES = 15;

/**
 * Rounds `value` at `places` decimals (negative: left of the point) on its decimal digits, as REDCap (PHP) rounds
 * a value a person typed: 1.005 to 2 places is 1.01, although the double nearest 1.005 lies just below it, so
 * `value * 100` is 100.49999999999999 and binary arithmetic gives 1. The digits are the shortest text that reads
 * back as the same double (`String(value)`), which is the value as written for any number of up to 15 significant
 * digits. `half_away` is PHP's round (half away from zero); `up` and `down` are REDCap's roundup and rounddown
 * (PHP's ceil and floor, towards +∞ and −∞). Not a number (REDCap's NaN, an infinity) stays as it is.
 */
export function roundDecimal(value: number, places: number, mode: RoundingMode): number {
  if (!Number.isFinite(value)) return value;
  const { negative, digits, exponent } = decimalDigits(value);
  // value = ±digits × 10^exponent; keep the digits down to 10^-places.
  const drop = -places - exponent;
  if (drop <= 0) return value;
  const unit = 10n ** BigInt(drop);
  let kept = digits / unit;
  const rest = digits % unit;
  if (rest !== 0n) {
    const away = mode === 'half_away' ? rest * 2n >= unit : mode === 'up' ? !negative : negative;
    if (away) kept += 1n;
  }
  const magnitude = Number(`${kept}e${-places}`);
  return negative ? (magnitude === 0 ? 0 : -magnitude) : magnitude;
}

/** The shortest decimal of a finite double as a whole number of digits and a power of ten. */
function decimalDigits(value: number): { negative: boolean; digits: bigint; exponent: number } {
  const [mantissa, power] = String(Math.abs(value)).split('e') as [string, string | undefined];
  const [whole, fraction = ''] = mantissa.split('.') as [string, string | undefined];
  return { negative: value < 0, digits: BigInt(whole + fraction), exponent: Number(power ?? 0) - fraction.length };
}

/** `{"decimal_round": [value, places, mode]}`: see roundDecimal. A value that is not a number is an error violation. */
export const decimalRound: ClinicalOperator = {
  name: 'decimal_round',
  evaluate: (args) => {
    const [value, places, mode] = args;
    if (typeof value !== 'number') throw new OperatorError('decimal_round', `argument 1 ${describeValue(value)} is not a number`);
    return roundDecimal(value, places as number, mode as RoundingMode);
  },
  checkArgs: (args) => {
    const usage = '{"decimal_round": [value, places, "half_away"|"up"|"down"]}';
    const problems = arityProblems(args, 3, 3, usage);
    if (problems.length > 0) return problems;
    const [, places, mode] = args;
    if (typeof places !== 'number' || !Number.isInteger(places) || Math.abs(places) > MAX_PLACES) {
      problems.push(`argument 2 ${describeValue(places)} must be a whole number of decimal places from -${MAX_PLACES} to ${MAX_PLACES}, written in the rule`);
    }
    if (!isLiteral(mode) || !MODES.includes(mode as RoundingMode)) problems.push(`argument 3 ${describeValue(mode)} must be "half_away", "up" or "down"; write ${usage}`);
    return problems;
  },
};
