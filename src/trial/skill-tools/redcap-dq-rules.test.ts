import { describe, expect, it } from 'vitest';
import { errorOf } from '../../testing/error-of.js';
import { MAX_REDCAP_DQ_RULES, readRedcapDqCsv } from './redcap-dq-rules.js';

describe('readRedcapDqCsv', () => {
  it("reads REDCap's rules export: quoted logic with commas, quotes and line breaks, in file order", () => {
    const csv = '\uFEFFrule_name,rule_logic,real_time_execution\r\n"Age under 18","[age] < 18",n\r\n"Late visit","datediff([v1_arm_1][visit_date], [v2_arm_1][visit_date], ""d"") > 30\nand [v2_arm_1][visit_date] <> \'\'",y\r\n';
    expect(readRedcapDqCsv(csv)).toEqual({
      rules: [
        { name: 'Age under 18', logic: '[age] < 18', line: 2 },
        { name: 'Late visit', logic: 'datediff([v1_arm_1][visit_date], [v2_arm_1][visit_date], "d") > 30\nand [v2_arm_1][visit_date] <> \'\'', line: 3 },
      ],
      problems: [],
    });
  });

  it('accepts the header as a spreadsheet names it, in any column order', () => {
    expect(readRedcapDqCsv('Rule Logic (Show discrepancy only if...),Rule Name\n[age] < 18,Age under 18').rules).toEqual([{ name: 'Age under 18', logic: '[age] < 18', line: 2 }]);
    expect(readRedcapDqCsv('name,logic\nAge under 18,[age] < 18').rules).toEqual([{ name: 'Age under 18', logic: '[age] < 18', line: 2 }]);
  });

  it('lists a rule without logic by its line and names a rule without a name by its line', () => {
    expect(readRedcapDqCsv('rule_name,rule_logic\nEmpty,\n,[age] > 120')).toEqual({
      rules: [{ name: 'Rule on line 3', logic: '[age] > 120', line: 3 }],
      problems: [{ rule: 'Empty', message: expect.stringContaining('line 2: the rule has no logic') }],
    });
  });

  it('refuses a file without a name or logic column, naming the header it has and the one expected', () => {
    const error = errorOf(() => readRedcapDqCsv('record_id,age\n1,40'));
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'csv', header: ['record_id', 'age'] } });
    expect(error.message).toContain('no rule name column (rule_name) and no logic column (rule_logic)');
    expect(error.message).toContain('rule_name,rule_logic,real_time_execution');
  });

  it('refuses CSV that cannot be read, and more rules than one import takes', () => {
    expect(errorOf(() => readRedcapDqCsv('rule_name,rule_logic\n"Age,[age] < 18'))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'csv' } });
    const many = ['rule_name,rule_logic', ...Array.from({ length: MAX_REDCAP_DQ_RULES + 1 }, (_, i) => `r${i},[age] > ${i}`)].join('\n');
    expect(errorOf(() => readRedcapDqCsv(many)).message).toContain(`at most ${MAX_REDCAP_DQ_RULES} rules`);
  });
});
