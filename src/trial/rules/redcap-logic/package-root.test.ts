import { describe, expect, it } from 'vitest';
import { compileRedcapLogic, createRuleEngine } from '../../../index.js';

describe('compileRedcapLogic from the package root', () => {
  it('returns JSON Logic that createRuleEngine() runs on a record', () => {
    const evaluate = createRuleEngine().compile(compileRedcapLogic("[enrollment_arm_1][consent_date] > [enrollment_arm_1][enr_date] or [age] < 18"));
    expect(evaluate({ age: 40, enrollment_arm_1: { consent_date: '2024-03-02', enr_date: '2024-03-01' } })).toBe(true);
    expect(evaluate({ age: 16, enrollment_arm_1: { consent_date: '2024-03-01', enr_date: '2024-03-01' } })).toBe(true);
    expect(evaluate({ age: 40, enrollment_arm_1: { consent_date: '2024-03-01', enr_date: '2024-03-01' } })).toBe(false);
  });
});
