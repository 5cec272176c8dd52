import type { EligibilityCriterion } from '../context.js';
import type { CriterionTest } from './types.js';

/**
 * A dictionary variable name (REDCap: a letter, then letters, digits and _). Anything else is refused rather
 * than cleaned up: a rule on a guessed name would silently check nothing, and a dot would reach into an event.
 */
const VARIABLE_NAME = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;

export function variableNameProblem(name: string): string | undefined {
  return VARIABLE_NAME.test(name)
    ? undefined
    : `${JSON.stringify(name)} is not a valid variable name: a data dictionary variable starts with a letter and has only letters, digits and _ (e.g. "egfr"); use the variable's name, not its label`;
}

const OPERATORS = ['>=', '<=', '>', '<', '==', '!=', 'between', 'in'] as const;

/**
 * Yes/no answers as REDCap codes them (yesno and truefalse fields: 1 and 0), so "pregnant == yes" checks the
 * value the data holds. The Chinese words because sites enter protocols in Chinese as often as in English.
 */
const CODED_ANSWERS: ReadonlyMap<string, number> = new Map([
  ['yes', 1],
  ['no', 0],
  ['true', 1],
  ['false', 0],
  ['是', 1],
  ['否', 0],
]);

const NUMERIC_TEXT = /^[-+]?(\d+(\.\d*)?|\.\d+)$/;

type CriterionOutcome = { test: CriterionTest } | { reason: string };

/** The check a criterion asks for, or why it cannot be checked and what would make it checkable. */
export function criterionTest(criterion: EligibilityCriterion): CriterionOutcome {
  const { field, operator, value, unit } = criterion;
  if (field === undefined || field.trim() === '') {
    return { reason: 'no field named: the criterion is text only; name the dictionary variable to check it (field, operator and value)' };
  }
  const nameProblem = variableNameProblem(field);
  if (nameProblem) return { reason: nameProblem };
  if (operator === undefined) return { reason: `no operator: say how ${field} is compared (${OPERATORS.join(', ')})` };
  if (!(OPERATORS as readonly string[]).includes(operator)) {
    return { reason: `operator ${JSON.stringify(operator)} is not one of ${OPERATORS.join(', ')}` };
  }
  if (value === undefined || value === null) return { reason: `no value: say what ${field} is compared with` };
  const withUnit = unit ? { unit } : {};

  switch (operator) {
    case '>=':
    case '<=':
    case '>':
    case '<': {
      const number = asNumber(value);
      if (number === undefined) return { reason: `${operator} needs a number to compare ${field} with, got ${describe(value)}` };
      return { test: { field, operator, value: number, ...withUnit } };
    }
    case 'between': {
      const bounds = Array.isArray(value) && value.length === 2 ? value.map(asNumber) : undefined;
      if (!bounds || bounds[0] === undefined || bounds[1] === undefined) {
        return { reason: `between needs [low, high], two numbers, got ${describe(value)}` };
      }
      const [low, high] = bounds as [number, number];
      if (low > high) return { reason: `between [${low}, ${high}]: the low bound is above the high bound; swap them` };
      return { test: { field, operator, value: [low, high], ...withUnit } };
    }
    case '==':
    case '!=': {
      if (Array.isArray(value)) return { reason: `${operator} compares with one value, got the list ${describe(value)}; use "in" for a list` };
      const single = asCode(value);
      if (single === undefined) return { reason: `${operator} needs a number or a text value, got ${describe(value)}` };
      return { test: { field, operator, value: single, ...withUnit } };
    }
    case 'in': {
      if (!Array.isArray(value) || value.length === 0) return { reason: `in needs a non-empty list of values, got ${describe(value)}` };
      const codes = value.map(asCode);
      if (codes.some((code) => code === undefined)) return { reason: `in needs numbers or text values, got ${describe(value)}` };
      return { test: { field, operator, value: codes as Array<number | string>, ...withUnit } };
    }
  }
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && NUMERIC_TEXT.test(value.trim())) return Number(value.trim());
  return undefined;
}

/** A value as the data holds it: numbers (also written as text), yes/no as 1/0, other text trimmed. */
function asCode(value: unknown): number | string | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  const number = asNumber(value);
  if (number !== undefined) return number;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return CODED_ANSWERS.get(value.trim().toLowerCase()) ?? value.trim();
}

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}
