import { describe, expect, it } from 'vitest';
import { lastAnswer, riskTone, urgentAdvice } from './risk';

describe('urgentAdvice', () => {
  it("reads the advice the safety check put above the model's answer", () => {
    const response = '⚠️ Seek emergency care now: go to an emergency department.\n\nDoes it itch?';
    expect(urgentAdvice(response)).toBe('Seek emergency care now: go to an emergency department.');
  });

  it('is null for a reply without the warning sign, or with nothing after it', () => {
    expect(urgentAdvice('This looks like tinea corporis.')).toBeNull();
    expect(urgentAdvice('⚠️ ')).toBeNull();
    expect(urgentAdvice(undefined)).toBeNull();
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
