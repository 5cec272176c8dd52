import { arityProblems, literalDateProblems, requireDate, type ClinicalOperator } from './clinical-operator.js';
import { parseIsoDate, type IsoDate } from './iso-date.js';

/**
 * Date operators. Plain string comparison of ISO values is wrong as soon as a time or an offset appears
 * ("2024-03-01T01:00+08:00" is before "2024-02-29T20:00Z"), so these compare parsed dates.
 */

/**
 * Whole days from a to b (b - a), counted on the calendar dates as written and ignoring the time of day: the
 * way CDISC derives study days from the date part of --DTC values, and the way a visit window "day 28 ± 3"
 * is read at a site.
 */
export function daysBetween(a: IsoDate, b: IsoDate): number {
  return b.epochDay - a.epochDay;
}

/**
 * Negative when a is earlier. Two datetimes compare as instants (offsets honoured); when either side is a
 * plain date the comparison is by calendar date, the coarser precision of the two.
 */
function compareDates(a: IsoDate, b: IsoDate): number {
  return a.hasTime && b.hasTime ? Math.sign(a.instantMs - b.instantMs) : Math.sign(a.epochDay - b.epochDay);
}

export const dateDiffDays: ClinicalOperator = {
  name: 'date_diff_days',
  evaluate: (args) => daysBetween(requireDate('date_diff_days', args, 0), requireDate('date_diff_days', args, 1)),
  checkArgs: (args) => [...arityProblems(args, 2, 2, '{"date_diff_days": [from, to]}'), ...literalDateProblems(args, [0, 1])],
};

function dateComparison(name: string, test: (order: number) => boolean): ClinicalOperator {
  return {
    name,
    evaluate: (args) => test(compareDates(requireDate(name, args, 0), requireDate(name, args, 1))),
    checkArgs: (args) => [...arityProblems(args, 2, 2, `{"${name}": [a, b]}`), ...literalDateProblems(args, [0, 1])],
  };
}

export const dateBefore = dateComparison('date_before', (order) => order < 0);
export const dateAfter = dateComparison('date_after', (order) => order > 0);
export const dateOnOrBefore = dateComparison('date_on_or_before', (order) => order <= 0);
export const dateOnOrAfter = dateComparison('date_on_or_after', (order) => order >= 0);

/** Whether the value is a valid ISO date or datetime; never throws, so it is the way to test for presence. */
export const isDate: ClinicalOperator = {
  name: 'is_date',
  evaluate: (args) => parseIsoDate(args[0]) !== null,
  checkArgs: (args) => arityProblems(args, 1, 1, '{"is_date": {"var": "field"}}'),
};
