import { describe, expect, it } from 'vitest';
import { groundingProblem, indexSources } from './grounding.js';

describe('groundingProblem: numbers', () => {
  it('accepts a number the user wrote, however it was written', () => {
    expect(groundingProblem(0.05, ['alpha .05 two-sided'])).toBeUndefined();
    expect(groundingProblem(0.05, ['significance level 5%'])).toBeUndefined();
    expect(groundingProblem(0.05, ['α = 0.05'])).toBeUndefined();
    expect(groundingProblem(0.8, ['80% power'])).toBeUndefined();
    expect(groundingProblem(1234, ['about 1,234 patients'])).toBeUndefined();
    expect(groundingProblem(128, ['we think n=128 is feasible'])).toBeUndefined();
    expect(groundingProblem(0.05, ['显著性水平０.０５'])).toBeUndefined();
    expect(groundingProblem(-7, ['screening from day -7'])).toBeUndefined();
    expect(groundingProblem(128, ['每组64，128例'])).toBeUndefined();
    expect(groundingProblem(64128, ['每组64，128例'])).toBeUndefined();
  });

  it('refuses a number nobody said, naming where it should have come from', () => {
    expect(groundingProblem(200, ['We want to compare two blood pressure drugs', '{"alpha":0.05}'])).toBe('200 was not found in what the user said or a tool computed');
    expect(groundingProblem(0.051, ['alpha 0.05'])).toMatch(/not found/);
    expect(groundingProblem(5, ['128 patients'])).toMatch(/not found/);
  });
});

describe('groundingProblem: strings', () => {
  const sources = ['我们想研究老年高血压患者使用新药后的血压控制情况', 'Adults with resistant hypertension, treated for 12 weeks'];

  it('accepts a paraphrase that shares a third of its content words with the sources', () => {
    expect(groundingProblem('Adults aged over 60 with treatment-resistant hypertension', ['adults over 60 with hypertension that resists treatment'])).toBeUndefined();
    expect(groundingProblem('Change in blood pressure control after 12 weeks in patients on the new drug', ['blood pressure after 12 weeks of the new drug'])).toBeUndefined();
  });

  it('accepts Chinese text by its character pairs', () => {
    expect(groundingProblem('老年高血压患者', sources)).toBeUndefined();
    expect(groundingProblem('糖尿病肾病患者的肾功能', sources)).toMatch(/shares too little/);
    // Short Chinese phrases are judged by the one-third rule, not as labels: a paraphrase of 6 characters passes.
    expect(groundingProblem('12周收缩压变化', ['主要看12周收缩压的变化'])).toBeUndefined();
    // A lone character of the value finds its use inside a longer run of the sources.
    expect(groundingProblem('≥65岁', ['65岁以上的患者'])).toBeUndefined();
    expect(groundingProblem('≥65岁', ['65名患者'])).toMatch(/0 of 1 words/);
  });

  it('refuses a sentence about something the user never raised', () => {
    expect(groundingProblem('Children with asthma receiving inhaled corticosteroids', sources)).toMatch(/shares too little with what the user said or a tool computed \(0 of 5 words found\)/);
  });

  it('refuses a string whose numbers were not said even when its words were', () => {
    expect(groundingProblem('Adults with hypertension treated for 24 weeks', sources)).toBe(
      'the number 24 in "Adults with hypertension treated for 24 weeks" was not found in what the user said or a tool computed',
    );
    expect(groundingProblem('alpha 5%', ['two-sided alpha of 0.05'])).toBeUndefined();
  });

  it('accepts a short label only when all its words were said or it is one of the allowed values', () => {
    expect(groundingProblem('resistant hypertension', sources)).toBeUndefined();
    expect(groundingProblem('double-blind', ['双盲随机对照'], { enumValues: ['open', 'single-blind', 'double-blind'] })).toBeUndefined();
    expect(groundingProblem('double-blind', ['双盲随机对照'])).toMatch(/a short label must be said or be one of the allowed values/);
    expect(groundingProblem('RCT', ['a randomised trial'], { enumValues: ['cohort'] })).toMatch(/short label/);
    expect(groundingProblem('hypertension cohort study', sources)).toMatch(/1 of 3 words/);
  });

  it('matches plural and -ed forms to their stem', () => {
    expect(groundingProblem('patient', ['patients'])).toBeUndefined();
    expect(groundingProblem('blinded assessors', ['blind assessor'])).toBeUndefined();
  });

  it('accepts a wordless string only when it was written as is', () => {
    expect(groundingProblem('≥', ['age ≥ 18'])).toBeUndefined();
    expect(groundingProblem('IV', ['given IV'])).toBeUndefined();
    expect(groundingProblem('PO', ['given IV'])).toMatch(/"PO" was not found/);
  });
});

describe('groundingProblem: booleans', () => {
  it('accepts a boolean only when its key came up', () => {
    expect(groundingProblem(true, ['the assessors will be blinded'], { key: 'isBlinded' })).toBeUndefined();
    expect(groundingProblem(false, ['no placebo arm'], { key: 'placebo_controlled' })).toBeUndefined();
    expect(groundingProblem(true, ['two parallel groups'], { key: 'isBlinded' })).toBe('true was not found in what the user said or a tool computed: "isBlinded" did not come up');
    expect(groundingProblem(true, ['blinded'])).toMatch(/this field/);
  });
});

describe('indexSources', () => {
  it('gives the same answers as the raw sources', () => {
    const raw = ['n=128 adults with hypertension, alpha 5%'];
    const index = indexSources(raw);
    for (const value of [128, 0.05, 64, 'adult hypertension', 'children']) expect(groundingProblem(value, index)).toBe(groundingProblem(value, raw));
    expect(groundingProblem(64, index)).toBeDefined();
  });
});
