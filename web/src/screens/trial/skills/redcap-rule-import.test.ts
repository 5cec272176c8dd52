import { describe, expect, it } from 'vitest';
import type { ImportRedcapRulesResult } from '../../../api/skills-api';
import { importRequest, initialSeverities } from './redcap-rule-import';

const preview: ImportRedcapRulesResult = {
  preview: true,
  imported: 2,
  problems: [{ rule: 'Under 18 today', message: 'function "today" is not supported' }],
  rules: [
    { position: 1, line: 2, name: 'Week 4 missing', logic: "[week4_arm_1][visit_date] = ''", status: 'importable', ruleId: 'week-4-missing', field: 'week4_arm_1.visit_date', severity: 'error', arms: [1] },
    { position: 2, line: 3, name: 'Under 18 today', logic: 'datediff([dob], today(), "y") < 18', status: 'refused', reason: 'function "today" is not supported' },
    { position: 3, line: 4, name: 'Heavy', logic: '[weight] > 200', status: 'importable', ruleId: 'heavy', field: 'weight', severity: 'error' },
  ],
};

describe('the REDCap rule import after its preview', () => {
  it('starts from the severities the preview proposed, for importable rules only', () => {
    expect(initialSeverities(preview)).toEqual({ 1: 'error', 3: 'error' });
  });

  it('sends every previewed rule in order, each importable one with the severity picked for it', () => {
    expect(importRequest(preview, { 1: 'warning', 3: 'info' }, { skillId: 'site-dq', name: 'Site DQ' })).toEqual({
      skillId: 'site-dq',
      name: 'Site DQ',
      rules: [
        { name: 'Week 4 missing', logic: "[week4_arm_1][visit_date] = ''", severity: 'warning' },
        { name: 'Under 18 today', logic: 'datediff([dob], today(), "y") < 18' },
        { name: 'Heavy', logic: '[weight] > 200', severity: 'info' },
      ],
    });
  });
});
