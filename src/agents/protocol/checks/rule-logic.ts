import type { CriterionTest, VisitWindowTest } from './types.js';

/**
 * JSON Logic for each kind of check. A hard rule passes when its logic is truthy and raises a violation when it
 * is not, so an inclusion rule is the criterion itself and an exclusion rule is its negation.
 */

const variable = (field: string) => ({ var: field });

/** True when the record meets the criterion (a blank value meets nothing). */
function criterionLogic(test: CriterionTest): unknown {
  const value = variable(test.field);
  switch (test.operator) {
    case 'between':
      return { and: [{ '>=': [value, test.value[0]] }, { '<=': [value, test.value[1]] }] };
    case 'in':
      // == rather than JSON Logic's "in" (strict): choice codes are stored as text ("1"), a protocol writes 1.
      return { or: test.value.map((item) => ({ '==': [value, item] })) };
    default:
      // == and != are loose in JSON Logic, so a code stored as "1" equals 1.
      return { [test.operator]: [value, test.value] };
  }
}

/** Inclusion: passes when the value is recorded and meets the criterion; unrecorded eligibility is not met. */
export function inclusionLogic(test: CriterionTest): unknown {
  return { and: [{ '!': { missing: [test.field] } }, criterionLogic(test)] };
}

/**
 * Exclusion: passes unless the value is recorded and meets the criterion. The blank guard is explicit because
 * JSON Logic compares null as 0 (a blank eGFR would be "< 30").
 */
export function exclusionLogic(test: CriterionTest): unknown {
  return { or: [{ missing: [test.field] }, { '!': criterionLogic(test) }] };
}

/** A blank date is a missing-data finding, not a window deviation, as in the shipped demo skill. */
export function visitWindowLogic(window: VisitWindowTest): unknown {
  return {
    or: [
      { missing: [window.dateField, window.anchorField] },
      { in_window: [variable(window.dateField), variable(window.anchorField), window.day, window.before, window.after] },
    ],
  };
}

/** The test in words for messages: `age between 18 and 75 years`, `pregnant == 1`. */
export function describeTest(test: CriterionTest): string {
  const unit = test.unit ? ` ${test.unit}` : '';
  switch (test.operator) {
    case 'between':
      return `${test.field} between ${test.value[0]} and ${test.value[1]}${unit}`;
    case 'in':
      return `${test.field} in [${test.value.map((item) => JSON.stringify(item)).join(', ')}]`;
    default:
      return `${test.field} ${test.operator} ${JSON.stringify(test.value)}${unit}`;
  }
}

export function describeWindow(window: VisitWindowTest): string {
  return `day ${window.day} -${window.before}/+${window.after} from ${window.anchorField}`;
}
