import { describe, expect, it } from 'vitest';
import type { RiskLevel } from '../types.js';
import { LEAD_MARK, LEVEL_GUIDANCE, leadWithGuidance, withoutContradictions } from './level-guidance.js';

const LEVELS: RiskLevel[] = ['low', 'moderate', 'high', 'urgent'];

describe('the risk level table', () => {
  it('says what each level means in English and in Chinese, and every level but low leads the answer', () => {
    for (const level of LEVELS) {
      expect(LEVEL_GUIDANCE[level].advice.en).toMatch(/\w/);
      expect(LEVEL_GUIDANCE[level].advice.zh).toMatch(/\p{Script=Han}/u);
    }
    expect(LEVELS.filter((level) => LEVEL_GUIDANCE[level].leads)).toEqual(['moderate', 'high', 'urgent']);
    expect(LEVEL_GUIDANCE.urgent.advice.en).toMatch(/^Seek emergency care now/);
    expect(LEVEL_GUIDANCE.high.advice.en).toMatch(/^See a dermatologist within two weeks/);
  });

  it('leaves out reassurance under a high or urgent level, in either language, and keeps the rest in order', () => {
    const en = 'This is most likely harmless, no need to worry. Do you have other moles like it? Nothing serious here!';
    expect(withoutContradictions(en, 'high')).toBe('Do you have other moles like it?');
    expect(withoutContradictions('这颗痣是良性的，不用担心。建议拍照观察变化。它会痒吗？', 'urgent')).toBe('建议拍照观察变化。它会痒吗？');
    expect(withoutContradictions(en, 'low')).toBe(en);
  });

  it('under a moderate level leaves out only the advice not to see a doctor', () => {
    const answer = 'It is probably contact dermatitis and not dangerous. There is no need to see a doctor. Avoid the new soap.';
    expect(withoutContradictions(answer, 'moderate')).toBe('It is probably contact dermatitis and not dangerous. Avoid the new soap.');
  });

  it('puts the advice first, marked, and a low level leaves the answer as it is', () => {
    expect(leadWithGuidance('Does it itch?', 'urgent', 'zh')).toBe(`${LEAD_MARK} ${LEVEL_GUIDANCE.urgent.advice.zh}\n\nDoes it itch?`);
    expect(leadWithGuidance('No need to worry.', 'high', 'en')).toBe(`${LEAD_MARK} ${LEVEL_GUIDANCE.high.advice.en}`);
    expect(leadWithGuidance('Does it itch?', 'low', 'en')).toBe('Does it itch?');
  });
});
