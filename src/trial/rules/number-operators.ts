import { arityProblems, type ClinicalOperator } from './clinical-operator.js';

/**
 * `is_number`: whether a value is a number or text that reads as one. Comparisons in imported REDCap logic
 * are numeric only when both sides are numeric (as REDCap's PHP compares them), and JSON Logic has no test for
 * that: `{"+": [value]}` throws on text, and `"10" < "9"` compares as text. Never throws.
 */

// Unambiguous (one way to match any text), so it runs in linear time: digits, an optional fraction, an exponent.
const NUMERIC_TEXT = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

export function isNumeric(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'string') return false;
  const text = value.trim();
  return NUMERIC_TEXT.test(text) && Number.isFinite(Number(text));
}

export const isNumber: ClinicalOperator = {
  name: 'is_number',
  evaluate: (args) => isNumeric(args[0]),
  checkArgs: (args) => arityProblems(args, 1, 1, '{"is_number": {"var": "field"}}'),
};
