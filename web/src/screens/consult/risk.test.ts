import { describe, expect, it } from 'vitest';
import { lastAnswer, leadAdvice, riskTone } from './risk';

describe('leadAdvice', () => {
  it("reads the advice the safety check put above the model's answer, at any level and in either language", () => {
    const response = '⚠️ Seek emergency care now: go to an emergency department.\n\nDoes it itch?';
    expect(leadAdvice(response)).toBe('Seek emergency care now: go to an emergency department.');
    expect(leadAdvice('⚠️ 请在两周内看皮肤科医生。\n\n还有别的痣吗？')).toBe('请在两周内看皮肤科医生。');
    expect(leadAdvice('⚠️ 请立即就医：马上去医院急诊。')).toBe('请立即就医：马上去医院急诊。');
  });

  it('is null for a reply without the warning sign, or with nothing after it', () => {
    expect(leadAdvice('This looks like tinea corporis.')).toBeNull();
    expect(leadAdvice('⚠️ ')).toBeNull();
    expect(leadAdvice(undefined)).toBeNull();
  });
});

describe('riskTone', () => {
  it('makes urgent an alert and every other level a status, each with its own colour', () => {
    expect(riskTone('urgent')).toEqual({ className: 'risk-banner risk-urgent', role: 'alert' });
    expect(riskTone('high').role).toBe('status');
    expect(new Set(['low', 'moderate', 'high', 'urgent'].map((level) => riskTone(level as 'low').className)).size).toBe(4);
  });
});

describe('lastAnswer', () => {
  it("is the consult's last answer, not the patient's last message", () => {
    const turns = [
      { role: 'user', content: 'A rash' },
      { role: 'assistant', content: 'Where?' },
      { role: 'user', content: 'Arm' },
    ];
    expect(lastAnswer(turns)).toBe('Where?');
    expect(lastAnswer([])).toBeUndefined();
  });
});
