import { describe, expect, it } from 'vitest';
import { compileRedcapLogic } from './index.js';
import { dataQualityRule } from './test-helpers.js';

const a = { var: 'a' };
const b = { var: 'b' };
const abs = (logic: unknown) => ({ pipe: [logic, { if: [{ '<': [{ var: '' }, 0] }, { '-': [{ var: '' }] }, { var: '' }] }] });
const blank = (path: string) => ({ '!!': { missing: [path] } });
/** A comparison with datediff of two fields: false (REDCap's NaN) while either date is blank. */
const unlessBlank = (paths: [string, string], comparison: unknown) => ({ if: [{ or: paths.map(blank) }, false, comparison] });

describe('compileRedcapLogic: datediff', () => {
  it('datediff([a],[b],"d") > 30: whole days with date_diff_days, unsigned by default', () => {
    expect(compileRedcapLogic('datediff([a],[b],"d") > 30')).toEqual(unlessBlank(['a', 'b'], { '>': [abs({ date_diff_days: [a, b] }), 30] }));
    const rule = dataQualityRule('datediff([a],[b],"d") > 30');
    expect(rule.fires({ a: '2024-01-01', b: '2024-02-01' })).toBe(true); // 31 days
    expect(rule.fires({ a: '2024-02-01', b: '2024-01-01' })).toBe(true); // -31, unsigned
    expect(rule.fires({ a: '2024-01-01', b: '2024-01-31' })).toBe(false); // 30 days
  });

  it('signed with true (after the format or in its place): date2 − date1 can be negative', () => {
    const signed = unlessBlank(['enr_arm_1.enr_date', 'v1_arm_1.visit_date'], { '<': [{ date_diff_days: [{ var: 'enr_arm_1.enr_date' }, { var: 'v1_arm_1.visit_date' }] }, 0] });
    expect(compileRedcapLogic('datediff([enr_arm_1][enr_date], [v1_arm_1][visit_date], "d", "ymd", true) < 0')).toEqual(signed);
    expect(compileRedcapLogic("datediff([enr_arm_1][enr_date], [v1_arm_1][visit_date], 'd', true) < 0")).toEqual(signed);
    const rule = dataQualityRule('datediff([enr_arm_1][enr_date], [v1_arm_1][visit_date], "d", "Y-M-D", true) < 0');
    expect(rule.fires({ enr_arm_1: { enr_date: '2024-05-02' }, v1_arm_1: { visit_date: '2024-05-01' } })).toBe(true);
    expect(rule.fires({ enr_arm_1: { enr_date: '2024-05-01' }, v1_arm_1: { visit_date: '2024-05-03' } })).toBe(false);
  });

  it('"y" and "M" divide days by 365.2425 and 30.44, as REDCap does', () => {
    expect(compileRedcapLogic('datediff([dob], [consent_date], "y") < 18')).toEqual(
      unlessBlank(['dob', 'consent_date'], { '<': [{ '/': [abs({ date_diff_days: [{ var: 'dob' }, { var: 'consent_date' }] }), 365.2425] }, 18] }),
    );
    const minor = dataQualityRule('datediff([dob], [consent_date], "y") < 18');
    expect(minor.fires({ dob: '2007-06-01', consent_date: '2025-05-31' })).toBe(true);
    expect(minor.fires({ dob: '2007-05-01', consent_date: '2025-06-01' })).toBe(false);
    expect(compileRedcapLogic("datediff([a], [b], 'M', true) > 6")).toEqual(unlessBlank(['a', 'b'], { '>': [{ '/': [{ date_diff_days: [a, b] }, 30.44] }, 6] }));
    const late = dataQualityRule("datediff([a], [b], 'M', true) > 6");
    expect(late.fires({ a: '2024-01-01', b: '2024-07-15' })).toBe(true);
    expect(late.fires({ a: '2024-01-01', b: '2024-06-15' })).toBe(false);
  });

  it("a blank date gives REDCap's NaN: no comparison with it flags the record but <>, in arithmetic too", () => {
    for (const record of [{ a: '2024-01-01', b: null }, { a: '', b: '2024-03-01' }, { a: '2024-01-01' }, {}]) {
      expect(dataQualityRule('datediff([a],[b],"d") > 30').messages(record)).toEqual([]);
      expect(dataQualityRule('datediff([a],[b],"d") < 30').fires(record)).toBe(false);
      expect(dataQualityRule('datediff([a],[b],"d") = 0').fires(record)).toBe(false);
      expect(dataQualityRule('datediff([a],[b],"d") <> 0').fires(record)).toBe(true);
      expect(dataQualityRule('round(datediff([a],[b],"d") / 7) >= 4').fires(record)).toBe(false);
      expect(dataQualityRule('abs(-datediff([a],[b],"d", true)) > 1').fires(record)).toBe(false);
      expect(dataQualityRule('30 < datediff([a],[b],"d") or [c] = 1').fires({ ...record, c: 1 })).toBe(true);
      expect(dataQualityRule('not(datediff([a],[b],"d") > 30)').fires(record)).toBe(true);
      expect(dataQualityRule('sum(datediff([a],[b],"d"), 5) = 5').fires(record)).toBe(true); // sum skips the blank
    }
    // With both dates the same logic computes as before.
    expect(dataQualityRule('datediff([a],[b],"d") > 30').fires({ a: '2024-01-01', b: '2024-03-01' })).toBe(true);
    expect(dataQualityRule('round(datediff([a],[b],"d") / 7) >= 4').fires({ a: '2024-01-01', b: '2024-03-01' })).toBe(true);
    expect(dataQualityRule('sum(datediff([a],[b],"d"), 5) = 65').fires({ a: '2024-01-01', b: '2024-03-01' })).toBe(true);
    // A date that is filled but not a date is a data problem to show, not a blank.
    expect(dataQualityRule('datediff([a],[b],"d") > 30').messages({ a: '2024-01-01', b: 'soon' })).toEqual([expect.stringContaining('date_diff_days: argument 2')]);
    expect(dataQualityRule("[b] <> '' and datediff([a],[b],\"d\") > 30").fires({ a: '2024-01-01', b: null })).toBe(false);
  });

  it('issue 32: a literal date reads in the format the fourth argument names ("mdy", "dmy"), as REDCap reads it', () => {
    expect(compileRedcapLogic('datediff([d1], "01-11-2024", "d", "mdy") > 3')).toEqual(
      { if: [blank('d1'), false, { '>': [abs({ date_diff_days: [{ var: 'd1' }, '2024-01-11'] }), 3] }] },
    );
    expect(compileRedcapLogic('datediff([d1], "01-11-2024", "d", "dmy") > 3')).toEqual(
      { if: [blank('d1'), false, { '>': [abs({ date_diff_days: [{ var: 'd1' }, '2024-11-01'] }), 3] }] },
    );
    // 1 January to 11 January is 10 days; to 1 November, 305.
    expect(dataQualityRule('datediff([d1], "01-11-2024", "d", "mdy") = 10').fires({ d1: '2024-01-01' })).toBe(true);
    expect(dataQualityRule('datediff([d1], "01-11-2024", "d", "dmy") = 305').fires({ d1: '2024-01-01' })).toBe(true);
    expect(dataQualityRule("datediff('1/11/2024', [d1], 'd', 'M-D-Y', true) = -10").fires({ d1: '2024-01-01' })).toBe(true);
    expect(dataQualityRule('datediff([d1], "2024-01-11", "d") = 10').fires({ d1: '2024-01-01' })).toBe(true);
    expect(dataQualityRule('datediff([d1], "2024-01-11 08:30", "d", "ymd") = 10').fires({ d1: '2024-01-01' })).toBe(true);
    // A literal that is not a date in the named format is refused, saying how to write it.
    expect(() => compileRedcapLogic('datediff([d1], "13-01-2024", "d", "mdy") > 3')).toThrow(/argument 2 "13-01-2024" is not a date in the "mdy" format; write it as MM-DD-YYYY, e.g. "11-01-2024"/);
    expect(() => compileRedcapLogic('datediff([d1], "01-11-2024", "d") > 3')).toThrow(/argument 2 "01-11-2024" is not a date in the "ymd" format; write it as YYYY-MM-DD/);
    expect(() => compileRedcapLogic('datediff("2024-02-30", [d1], "d") > 3')).toThrow(/argument 1 "2024-02-30" is not a date/);
  });

  it('refuses "today", time units and unknown units by name', () => {
    expect(() => compileRedcapLogic("datediff([dob], 'today', 'y') < 18")).toThrow(/datediff with "today" at character 1 is not supported/);
    expect(() => compileRedcapLogic('datediff([a], [b], "h") > 1')).toThrow(/unit "h" needs the time of day/);
    expect(() => compileRedcapLogic('datediff([a], [b], "w") > 1')).toThrow(/the unit must be "d", "M" or "y", got "w"/);
    expect(() => compileRedcapLogic('datediff([a], [b], "d", "iso") > 1')).toThrow(/argument 4 must be a date format/);
    expect(() => compileRedcapLogic('datediff([a], [b]) > 1')).toThrow(/datediff at character 1 takes 3 to 5 arguments, got 2/);
  });
});

describe('compileRedcapLogic: other functions', () => {
  it('sum(...) adds the numeric values and skips blanks and text, as REDCap does', () => {
    const fold = (args: unknown[]) => ({ reduce: [{ filter: [args, { is_number: { var: '' } }] }, { '+': [{ var: 'accumulator' }, { var: 'current' }] }, 0] });
    expect(compileRedcapLogic('sum([q1], [q2], [q3]) > 10')).toEqual({ '>': [fold([{ var: 'q1' }, { var: 'q2' }, { var: 'q3' }]), 10] });
    const rule = dataQualityRule('sum([q1], [q2], [q3]) > 10');
    expect(rule.fires({ q1: 5, q2: '4', q3: 3 })).toBe(true);
    expect(rule.fires({ q1: 5, q2: null, q3: 'n/a' })).toBe(false);
    expect(rule.fires({ q1: 5, q2: 5, q3: null })).toBe(false);
  });

  it('if(cond, a, b) uses REDCap truth for its condition', () => {
    expect(compileRedcapLogic("if([sex] = '1', [hb] < 13, [hb] < 12)")).toEqual({
      if: [
        { if: [{ is_number: { var: 'sex' } }, { '===': [{ '+': [{ var: 'sex' }] }, 1] }, { '===': [{ cat: [{ var: ['sex', ''] }] }, '1'] }] },
        { if: [{ is_number: { var: 'hb' } }, { '<': [{ '+': [{ var: 'hb' }] }, 13] }, { '<': [{ cat: [{ var: ['hb', ''] }] }, '13'] }] },
        { if: [{ is_number: { var: 'hb' } }, { '<': [{ '+': [{ var: 'hb' }] }, 12] }, { '<': [{ cat: [{ var: ['hb', ''] }] }, '12'] }] },
      ],
    });
    const rule = dataQualityRule("if([sex] = '1', [hb] < 13, [hb] < 12)");
    expect(rule.fires({ sex: '1', hb: 12.5 })).toBe(true);
    expect(rule.fires({ sex: '2', hb: 12.5 })).toBe(false);
    expect(rule.fires({ sex: '2', hb: 11.9 })).toBe(true);
    expect(dataQualityRule('if([pregnant], 1, 0) = 1').fires({ pregnant: '0' })).toBe(false);
    expect(dataQualityRule('if([pregnant], 1, 0) = 1').fires({ pregnant: '1' })).toBe(true);
  });

  it('round(x, n) rounds half away from zero, on the decimal digits (decimal_round)', () => {
    expect(compileRedcapLogic('round([bmi], 1) <> [bmi_recorded]')).toEqual({
      pipe: [
        [{ decimal_round: [{ '+': [{ var: 'bmi' }] }, 1, 'half_away'] }, { var: 'bmi_recorded' }],
        { if: [{ is_number: { var: '1' } }, { '!==': [{ var: '0' }, { '+': [{ var: '1' }] }] }, { '!==': [{ cat: [{ '??': [{ var: '0' }, ''] }] }, { cat: [{ '??': [{ var: '1' }, ''] }] }] }] },
      ],
    });
    const rule = dataQualityRule('round([bmi], 1) <> [bmi_recorded]');
    expect(rule.fires({ bmi: 24.36, bmi_recorded: 24.4 })).toBe(false);
    expect(rule.fires({ bmi: 24.34, bmi_recorded: 24.4 })).toBe(true);
    const engine = (logic: string, expected: number) => expect(dataQualityRule(`${logic} <> ${expected}`).fires({})).toBe(false);
    engine('round(2.5)', 3);
    engine('round(-2.5)', -3);
    engine('round(-2.4)', -2);
    engine('round(1.25, 1)', 1.3);
    expect(() => compileRedcapLogic('round([a], [b]) > 1')).toThrow(/round at character 1: decimals must be a whole number from 0 to 10/);
  });

  it('issue 32: round([v], 2) = 1.01 holds for 1.005, as in REDCap (PHP), though 1.005 * 100 is 100.49999999999999', () => {
    const rule = dataQualityRule('round([v], 2) = 1.01');
    expect(rule.fires({ v: '1.005' })).toBe(true);
    expect(rule.fires({ v: 1.005 })).toBe(true);
    expect(rule.fires({ v: '1.0049' })).toBe(false);
    // PHP's round(): 5.045 -> 5.05, 5.055 -> 5.06, 1.955 -> 1.96, -1.005 -> -1.01, 0.285 -> 0.29.
    for (const [value, expected] of [['5.045', 5.05], ['5.055', 5.06], ['1.955', 1.96], ['-1.005', -1.01], ['0.285', 0.29]] as const) {
      expect(dataQualityRule(`round([v], 2) = ${expected}`).fires({ v: value }), `round(${value}, 2)`).toBe(true);
    }
    // Arithmetic first, then the rounding of the result's digits: 0.1 + 0.2 is 0.30000000000000004 -> 0.3.
    expect(dataQualityRule('round([a] + [b], 1) = 0.3').fires({ a: '0.1', b: '0.2' })).toBe(true);
  });

  it('roundup and rounddown go towards +infinity and -infinity on the decimal digits (PHP ceil and floor)', () => {
    expect(compileRedcapLogic('roundup([v], 1) > 2')).toEqual({ '>': [{ decimal_round: [{ '+': [{ var: 'v' }] }, 1, 'up'] }, 2] });
    const engine = (logic: string, expected: number) => expect(dataQualityRule(`${logic} = ${expected}`).fires({}), logic).toBe(true);
    engine('roundup(1.21, 1)', 1.3);
    engine('roundup(-1.21, 1)', -1.2);
    engine('roundup(1.1, 2)', 1.1); // binary: ceil(110.00000000000001) / 100 = 1.11
    engine('roundup(4.2)', 5);
    engine('rounddown(1.29, 1)', 1.2);
    engine('rounddown(-1.21, 1)', -1.3);
    engine('rounddown(0.29, 2)', 0.29); // binary: floor(28.999999999999996) / 100 = 0.28
    engine('rounddown(4.8)', 4);
    // A blank date's NaN passes through, so no comparison holds.
    expect(dataQualityRule('roundup(datediff([a],[b],"d") / 7) >= 4').fires({ a: '2024-01-01' })).toBe(false);
    expect(() => compileRedcapLogic('rounddown([a], 11) > 1')).toThrow(/rounddown at character 1: decimals must be a whole number from 0 to 10/);
  });

  it('abs(x)', () => {
    expect(compileRedcapLogic('abs([a] - [b]) > 5')).toEqual({ '>': [abs({ '-': [a, b] }), 5] });
    const rule = dataQualityRule('abs([a] - [b]) > 5');
    expect(rule.fires({ a: 2, b: 9 })).toBe(true);
    expect(rule.fires({ a: 9, b: 2 })).toBe(true);
    expect(rule.fires({ a: 9, b: 5 })).toBe(false);
  });

  it('min(...) and max(...) skip blanks and text', () => {
    const current = { '+': [{ var: 'current' }] };
    const extreme = (op: string) => ({ if: [{ or: [{ '===': [{ var: 'accumulator' }, null] }, { [op]: [current, { var: 'accumulator' }] }] }, current, { var: 'accumulator' }] });
    expect(compileRedcapLogic('min([sbp1], [sbp2]) < 90')).toEqual({
      pipe: [
        [{ reduce: [{ filter: [[{ var: 'sbp1' }, { var: 'sbp2' }], { is_number: { var: '' } }] }, extreme('<'), null] }, 90],
        { if: [{ is_number: { var: '0' } }, { '<': [{ '+': [{ var: '0' }] }, 90] }, { '<': [{ cat: [{ '??': [{ var: '0' }, ''] }] }, '90'] }] },
      ],
    });
    const low = dataQualityRule('min([sbp1], [sbp2]) < 90');
    expect(low.fires({ sbp1: 120, sbp2: 85 })).toBe(true);
    expect(low.fires({ sbp1: 120, sbp2: null })).toBe(false);
    const high = dataQualityRule('max([sbp1], [sbp2], [sbp3]) > 180');
    expect(high.fires({ sbp1: 120, sbp2: '185', sbp3: null })).toBe(true);
    expect(high.fires({ sbp1: 120, sbp2: 'n/a', sbp3: 175 })).toBe(false);
  });

  it('isnumber(x)', () => {
    expect(compileRedcapLogic("[weight] <> '' and not isnumber([weight])")).toEqual({ and: [{ '!': { '!!': { missing: ['weight'] } } }, { '!': { is_number: { var: 'weight' } } }] });
    const rule = dataQualityRule("[weight] <> '' and not isnumber([weight])");
    expect(rule.fires({ weight: 'seventy' })).toBe(true);
    expect(rule.fires({ weight: '70.5' })).toBe(false);
    expect(rule.fires({ weight: null })).toBe(false);
    // A truth value compares as 1 or 0, as in REDCap.
    expect(compileRedcapLogic('isnumber([weight]) = 0')).toEqual({ '===': [{ if: [{ is_number: { var: 'weight' } }, 1, 0] }, 0] });
    expect(dataQualityRule('isnumber([weight]) = 0').fires({ weight: 'n/a' })).toBe(true);
    expect(dataQualityRule('isnumber([weight]) = 0').fires({ weight: 70 })).toBe(false);
  });

  it('isblankormissingcode(x) is true on a blank value', () => {
    expect(compileRedcapLogic('isblankormissingcode([v1_arm_1][hb])')).toEqual({ '!!': { missing: ['v1_arm_1.hb'] } });
    const rule = dataQualityRule('isblankormissingcode([v1_arm_1][hb])');
    expect(rule.fires({ v1_arm_1: { hb: null } })).toBe(true);
    expect(rule.fires({ v1_arm_1: {} })).toBe(true);
    expect(rule.fires({ v1_arm_1: { hb: 13 } })).toBe(false);
  });

  it('contains, not_contain, starts_with and ends_with ignore case, through matches', () => {
    const text = { cat: [{ var: ['site_note', ''] }] };
    expect(compileRedcapLogic("contains([site_note], 'a.e.')")).toEqual({ matches: [text, 'a\\.e\\.', 'i'] });
    expect(compileRedcapLogic("not_contain([site_note], 'ok')")).toEqual({ '!': { matches: [text, 'ok', 'i'] } });
    expect(compileRedcapLogic("starts_with([site_note], 'SAE')")).toEqual({ matches: [text, '^SAE', 'i'] });
    expect(compileRedcapLogic("ends_with([site_note], '(x)')")).toEqual({ matches: [text, '\\(x\\)$', 'i'] });
    expect(dataQualityRule("contains([site_note], 'a.e.')").fires({ site_note: 'Possible A.E. reported' })).toBe(true);
    expect(dataQualityRule("contains([site_note], 'a.e.')").fires({ site_note: 'Possible axex reported' })).toBe(false);
    expect(dataQualityRule("not_contain([site_note], 'ok')").fires({ site_note: 'pending' })).toBe(true);
    expect(dataQualityRule("not_contain([site_note], 'ok')").fires({ site_note: 'OK' })).toBe(false);
    expect(dataQualityRule("starts_with([site_note], 'SAE')").fires({ site_note: 'sae: fall' })).toBe(true);
    expect(dataQualityRule("starts_with([site_note], 'SAE')").fires({ site_note: 'no sae' })).toBe(false);
    expect(dataQualityRule("ends_with([site_note], '(x)')").fires({ site_note: 'done (X)' })).toBe(true);
    expect(dataQualityRule("ends_with([site_note], '(x)')").fires({ site_note: '(x) done' })).toBe(false);
    expect(dataQualityRule("contains([site_note], 'x')").fires({ site_note: null })).toBe(false);
    expect(() => compileRedcapLogic('contains([a], [b])')).toThrow(/contains at character 1: the text to look for must be written in quotes/);
  });
});
