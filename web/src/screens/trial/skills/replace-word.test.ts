import { describe, expect, it } from 'vitest';
import { replaceWord } from './replace-word';

describe('replaceWord', () => {
  it('replaces the misspelt name wherever it stands alone, including after an event prefix', () => {
    expect(replaceWord('{ var: v2_arm_1.wieght } and { missing: [wieght] }', 'wieght', 'weight')).toBe('{ var: v2_arm_1.weight } and { missing: [weight] }');
  });
  it('leaves longer names that contain it alone, and reads the word literally', () => {
    expect(replaceWord('wieght_kg wieght', 'wieght', 'weight')).toBe('wieght_kg weight');
    expect(replaceWord('a.b axb', 'a.b', 'c')).toBe('c axb');
  });
});
