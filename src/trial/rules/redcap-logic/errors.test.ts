import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../../core/errors.js';
import { compileRedcapLogic, MAX_LOGIC_LENGTH, MAX_NESTING_DEPTH } from './index.js';

function failure(logic: string): ClinAgentError {
  try {
    compileRedcapLogic(logic);
  } catch (error) {
    expect(error).toBeInstanceOf(ClinAgentError);
    expect((error as ClinAgentError).code).toBe('VALIDATION_FAILED');
    return error as ClinAgentError;
  }
  throw new Error(`expected ${logic} to be refused`);
}

describe('compileRedcapLogic: errors name the function or the position', () => {
  it('an unknown function is named with the supported ones', () => {
    const error = failure('[a] = 1 and mean([b], [c]) > 2');
    expect(error.message).toBe(
      'REDCap logic: function "mean" at character 13 is not supported; supported functions: abs, contains, datediff, ends_with, if, isblankormissingcode, isnumber, max, min, not_contain, round, rounddown, roundup, starts_with, sum.',
    );
    expect(error.details).toMatchObject({ function: 'mean', position: 13 });
    expect(failure('today() > [a]').message).toContain('function "today" at character 1 is not supported; a rule over stored records must give the same answer');
  });

  it('an unclosed parenthesis names where it opened and where the logic ends', () => {
    const error = failure('([a] = 1 or [b] = 2');
    expect(error.message).toBe('REDCap logic: expected ")" to close the "(" at character 1, found the end of the logic at character 20.');
    expect(error.details).toMatchObject({ position: 20, opened: 1, expected: '")"' });
    expect(failure('sum([a], [b] > 3').message).toBe('REDCap logic: expected "," or ")" in the arguments of sum( opened at character 4, found the end of the logic at character 17.');
  });

  it('a parenthesis that closes nothing is named by position', () => {
    const error = failure('[a] = 1) or [b] = 2');
    expect(error.message).toBe('REDCap logic: unexpected ")" at character 8: it closes no "("; remove it or add the missing "(".');
    expect(error.details).toMatchObject({ position: 8 });
  });

  it('other syntax errors say what was expected where', () => {
    expect(failure('[a] = ').message).toBe('REDCap logic: expected a value ([field], a number, \'text\', a function or "(") at character 7, found the end of the logic.');
    expect(failure('[a] = 1 [b] = 2').message).toContain('expected an operator (=, <>, <, and, or, +, ...) or the end of the logic at character 9, found [b]');
    expect(failure("[a] = 'open").message).toBe('REDCap logic: the text opened with \' at character 7 is never closed; add the closing \'.');
    expect(failure('[age > 18').message).toBe('REDCap logic: the "[" at character 1 is never closed; add "]".');
    expect(failure('[a] = 1 or [age > 18] = 1').message).toContain('[age > 18] is not a field or event name (character 12)');
    expect(failure('[a] = yes').message).toContain('"yes" at character 7 is neither a function call nor a keyword');
    expect(failure('[a] ^ 2').message).toContain('unexpected "^" at character 5');
    expect(failure('[a] = 1 and').message).toContain('at character 12, found the end of the logic');
  });

  it('smart variables and repeating instances are refused by name', () => {
    expect(failure('[event-name] = "v1_arm_1"').message).toContain('smart variable [event-name] is not supported (character 1)');
    expect(failure('[visits][2] = 1').message).toContain('repeating instance [2] after [visits] is not supported');
    expect(failure('[a][b][c] = 1').message).toContain('a reference has at most two parts');
  });

  it('bounds nesting depth and length, so no logic can exhaust the stack or take long', () => {
    expect(() => compileRedcapLogic(`${'('.repeat(MAX_NESTING_DEPTH - 2)}[a] = 1${')'.repeat(MAX_NESTING_DEPTH - 2)}`)).not.toThrow();
    expect(failure(`${'('.repeat(5000)}[a]${')'.repeat(5000)}`).message).toContain(`nesting deeper than ${MAX_NESTING_DEPTH} levels`);
    expect(failure(`${'not '.repeat(1000)}[a]`).message).toContain('nesting deeper than');
    expect(failure(`${'-'.repeat(1000)}[a]`).message).toContain('nesting deeper than');
    expect(failure(Array.from({ length: 500 }, (_, i) => `[f${i}]`).join(' + ')).message).toContain('arithmetic operators');
    expect(failure(`[a] = '${'x'.repeat(MAX_LOGIC_LENGTH)}'`).message).toContain(`over the ${MAX_LOGIC_LENGTH}-character limit`);
  });

  it('compiles long logic: 1 000 conditions at once', () => {
    // Milliseconds, as `npm run bench:rules` shows ("Linear-time inputs"); a quadratic parser would time this out.
    const logic = Array.from({ length: 1000 }, (_, i) => `[f${i}] = ${i}`).join(' or ');
    expect(logic.length).toBeLessThan(MAX_LOGIC_LENGTH);
    const compiled = compileRedcapLogic(logic) as { or: unknown[] };
    expect(compiled.or).toHaveLength(1000);
  });

  it('refuses a value that is not text', () => {
    expect(() => compileRedcapLogic(42 as unknown as string)).toThrow('REDCap logic must be text such as "[age] < 18", got number.');
  });
});
