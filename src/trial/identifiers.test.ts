import { describe, expect, it } from 'vitest';
import { withoutIdentifierValues } from './identifiers.js';
import { compileRules } from './rules/index.js';

const PHONE = '13800138000';

/** The message a rule on `age` gives when its logic fails on what it computed from the phone number. */
function errorOf(logic: unknown, phone: unknown): string {
  const [violation] = compileRules([{ id: 'contact-check', field: 'age', logic, message: 'contact check' }]).run({ age: 40, phone });
  return violation!.message;
}

describe('an evaluation error that shows part of an identifier value', () => {
  it('keeps only its head when it quotes a cut of the value (substr of a phone number)', () => {
    const message = errorOf({ date_before: [{ substr: [{ var: 'phone' }, 0, 4] }, '2020-01-01'] }, PHONE);
    expect(message).toContain('"1380"');
    expect(withoutIdentifierValues(message, [PHONE])).toBe('Rule "contact-check" could not be evaluated (its detail quoted part of an identifier value, so it is withheld)');
  });

  it('keeps only its head when it shows a number worked out from the value, which errors show without quotes', () => {
    const message = errorOf({ date_before: [{ '%': [{ var: 'phone' }, 10000] }, '2020-01-01'] }, Number(PHONE));
    expect(message).toMatch(/: 8000$/);
    expect(withoutIdentifierValues(message, [Number(PHONE)])).toBe('Rule "contact-check" could not be evaluated (its detail quoted part of an identifier value, so it is withheld)');
  });

  it('keeps the detail of an error about other values, digits in names included', () => {
    const message = 'Rule "v1_arm_12-check" could not be evaluated: date_before: argument 1 is not an ISO date (YYYY-MM-DD): 4711';
    // The phone holds "12" too: a rule's name is no part of a value.
    expect(withoutIdentifierValues(message, ['13800112000'])).toBe(message);
  });
});
