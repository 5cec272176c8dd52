import { describe, expect, it } from 'vitest';
import { countTokens, fitToBudget, trimToTokens } from './tokenizer.js';

const english = 'Subject S004 was enrolled on 2025-06-18 without a documented informed consent date.';
const chinese = '高血压患者的基线收缩压和舒张压需要在随访时记录。知情同意书签署日期缺失是重大方案偏离。';
const mixed = `${english} ${chinese} 🩺👩‍⚕️ SBP 300 mmHg?`;

describe('countTokens', () => {
  it('counts English and Chinese text as more than zero tokens, the same way every time', () => {
    for (const text of [english, chinese, mixed]) {
      const count = countTokens(text);
      expect(count).toBeGreaterThan(0);
      expect(countTokens(text)).toBe(count);
    }
  });

  it('counts more tokens for more text and none for an empty string', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens(english + english)).toBeGreaterThan(countTokens(english));
    expect(countTokens(chinese + chinese)).toBeGreaterThan(countTokens(chinese));
  });
});

describe('trimToTokens', () => {
  it('returns text within the budget unchanged', () => {
    expect(trimToTokens(english, countTokens(english))).toBe(english);
    expect(trimToTokens(english, 10_000)).toBe(english);
  });

  it('returns an empty string for a budget of zero or less', () => {
    expect(trimToTokens(english, 0)).toBe('');
    expect(trimToTokens(english, -5)).toBe('');
  });

  it('keeps every cut within its budget and a prefix of the text, even inside Chinese characters and emoji', () => {
    for (const text of [english, chinese, mixed]) {
      for (let budget = 1; budget < countTokens(text); budget++) {
        const trimmed = trimToTokens(text, budget);
        expect(countTokens(trimmed), `${budget} tokens of ${JSON.stringify(text)}`).toBeLessThanOrEqual(budget);
        expect(text.startsWith(trimmed), `${budget} tokens gave ${JSON.stringify(trimmed)}`).toBe(true);
        expect(trimmed).not.toContain('\uFFFD');
      }
    }
  });

  it('keeps most of the budget rather than cutting to nothing', () => {
    const long = english.repeat(20);
    expect(countTokens(trimToTokens(long, 50))).toBeGreaterThanOrEqual(48);
  });
});

describe('fitToBudget', () => {
  const chunks = [english, chinese, mixed, english];
  const cost = chunks.map((chunk) => countTokens(chunk));

  it('keeps the longest prefix of items whose total stays within the budget', () => {
    const budget = cost[0]! + cost[1]! + cost[2]! - 1;

    const kept = fitToBudget(chunks, (chunk) => chunk, budget);

    expect(kept).toEqual([english, chinese]);
    expect(kept.reduce((sum, chunk) => sum + countTokens(chunk), 0)).toBeLessThanOrEqual(budget);
  });

  it('stops at the first item that does not fit instead of skipping ahead to smaller ones', () => {
    const items = [{ text: english.repeat(5) }, { text: 'ok' }];

    expect(fitToBudget(items, (item) => item.text, countTokens(english))).toEqual([]);
  });

  it('keeps everything when the budget is large and nothing when it is zero', () => {
    expect(fitToBudget(chunks, (chunk) => chunk, 100_000)).toEqual(chunks);
    expect(fitToBudget(chunks, (chunk) => chunk, 0)).toEqual([]);
  });
});
