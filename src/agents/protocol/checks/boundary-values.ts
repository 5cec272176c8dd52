import type { CriterionTest } from './types.js';

interface SampleValue {
  value: number | string;
  note: string;
}

/**
 * Values on each side of a criterion's edge: those that meet it (on the bound) and those that just miss it (one
 * step past). A step is one unit of the bound's last decimal place, so `>= 18` is probed with 17 and 18 and
 * `>= 1.5` with 1.4 and 1.5: the values where an off-by-one (> for >=) would show.
 */
export function boundaryValues(test: CriterionTest): { meets: SampleValue[]; misses: SampleValue[] } {
  switch (test.operator) {
    case '>=':
      return { meets: [onBound(test.value)], misses: [below(test.value)] };
    case '>':
      return { meets: [above(test.value)], misses: [onBound(test.value)] };
    case '<=':
      return { meets: [onBound(test.value)], misses: [above(test.value)] };
    case '<':
      return { meets: [below(test.value)], misses: [onBound(test.value)] };
    case 'between': {
      const [low, high] = test.value;
      const places = Math.max(decimals(low), decimals(high));
      return {
        meets: [{ value: low, note: 'on the lower bound' }, { value: high, note: 'on the upper bound' }],
        misses: [
          { value: shift(low, -1, places), note: 'just below the lower bound' },
          { value: shift(high, 1, places), note: 'just above the upper bound' },
        ],
      };
    }
    case '==':
      return { meets: equalValues(test.value), misses: otherValues([test.value]) };
    case '!=':
      return { meets: otherValues([test.value]), misses: equalValues(test.value) };
    case 'in':
      return { meets: test.value.flatMap(equalValues), misses: otherValues(test.value) };
  }
}

/** The value itself and, for a number, its text form: REDCap stores a choice code as text ("1"). */
function equalValues(value: number | string): SampleValue[] {
  return typeof value === 'number'
    ? [
        { value, note: 'the value' },
        { value: String(value), note: 'the value as text, as a choice code is stored' },
      ]
    : [{ value, note: 'the value' }];
}

/** Values next to, but not equal to, any of `values`. */
function otherValues(values: ReadonlyArray<number | string>): SampleValue[] {
  const numbers = values.filter((value): value is number => typeof value === 'number');
  if (numbers.length === values.length) {
    const places = Math.max(...numbers.map(decimals));
    const candidates = [shift(Math.min(...numbers), -1, places), shift(Math.max(...numbers), 1, places)];
    return [...new Set(candidates)].map((value) => ({ value, note: 'next to the value' }));
  }
  let other = 'other';
  while (values.includes(other)) other = `${other}_`;
  return [{ value: other, note: 'another value' }];
}

function onBound(value: number): SampleValue {
  return { value, note: 'on the bound' };
}

function below(value: number): SampleValue {
  return { value: shift(value, -1, decimals(value)), note: 'just below the bound' };
}

function above(value: number): SampleValue {
  return { value: shift(value, 1, decimals(value)), note: 'just above the bound' };
}

/** value ± one unit of the given decimal place, rounded so 1.5 - 0.1 is 1.4 and not 1.4000000000000001. */
function shift(value: number, direction: 1 | -1, places: number): number {
  return Number((value + direction * 10 ** -places).toFixed(places));
}

function decimals(value: number): number {
  const [, fraction = ''] = String(value).split('.');
  // Exponent forms (1e-7) are past any measurement precision a criterion states; 6 places is enough to cross them.
  return String(value).includes('e') ? 6 : Math.min(fraction.length, 6);
}
