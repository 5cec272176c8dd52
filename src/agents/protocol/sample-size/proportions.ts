import type { ParsedSampleSizeInput } from './input.js';
import { invalid } from './input.js';
import { zQuantile } from './quantiles.js';
import { allocationRatio, groups, roundUp, type SampleSizeResult } from './result.js';

function describe(input: ParsedSampleSizeInput): string {
  return `alpha ${input.alpha} (${input.sides}-sided: each side at ${input.alpha / input.sides}), power ${input.power}`;
}

/** z for the hypothesis: β for superiority and non-inferiority, β/2 for equivalence (Chow, Shao & Wang 2008). */
function zPower(input: ParsedSampleSizeInput): number {
  return zQuantile(input.hypothesis === 'equivalence' ? 1 - (1 - input.power) / 2 : input.power);
}

/** Distance the test must detect: |ε| (superiority), ε - δ (non-inferiority), δ - |ε| (equivalence). */
function distance(input: ParsedSampleSizeInput, effect: number, effectField: string): number {
  const margin = input.margin ?? 0;
  const gap = input.hypothesis === 'superiority' ? Math.abs(effect) : input.hypothesis === 'non_inferiority' ? effect - margin : margin - Math.abs(effect);
  if (gap <= 0) {
    throw invalid(input.hypothesis === 'superiority' ? effectField : 'margin', input.hypothesis === 'superiority' ? 'the two proportions are equal, so no difference can be detected' : input.hypothesis === 'non_inferiority' ? 'the expected difference must lie above the non-inferiority margin' : 'the margin must exceed the expected absolute difference');
  }
  return gap;
}

export function twoProportions(input: ParsedSampleSizeInput): SampleSizeResult {
  const p1 = input.p1!;
  const p2 = input.p2!;
  const k = input.ratio;
  const zAlpha = zQuantile(1 - input.alpha / input.sides);
  const gap = distance(input, p1 - p2, 'p2');
  if (input.continuityCorrection && input.hypothesis !== 'superiority') throw invalid('continuityCorrection', `the continuity correction is supported for superiority only, not yet for ${input.hypothesis}`);
  const base = [`proportion ${p1} in group 1 and ${p2} in group 2, ${describe(input)}, ${allocationRatio(k)}`];
  if (input.hypothesis === 'superiority') {
    // Fleiss: pooled variance under H0, unpooled under H1.
    const pBar = (p1 + k * p2) / (1 + k);
    const n = (zAlpha * Math.sqrt(pBar * (1 - pBar) * (1 + 1 / k)) + zPower(input) * Math.sqrt(p1 * (1 - p1) + (p2 * (1 - p2)) / k)) ** 2 / gap ** 2;
    // Fleiss, Tytun & Ury (1980) continuity correction.
    const n1 = input.continuityCorrection ? (n / 4) * (1 + Math.sqrt(1 + (2 * (k + 1)) / (n * k * gap))) ** 2 : n;
    const g = groups(n1, k, input.dropout);
    const cc = input.continuityCorrection ? 'with the Fleiss-Tytun-Ury continuity correction' : 'without continuity correction';
    return { perGroup: g.perGroup, total: g.total, method: `two proportions, superiority, normal approximation (Fleiss) ${cc}`, assumptions: [...base, g.note] };
  }
  const n1 = ((zAlpha + zPower(input)) ** 2 * (p1 * (1 - p1) + (p2 * (1 - p2)) / k)) / gap ** 2;
  const g = groups(n1, k, input.dropout);
  const section = input.hypothesis === 'non_inferiority' ? '4.2.2' : '4.2.3';
  return { perGroup: g.perGroup, total: g.total, method: `two proportions, ${input.hypothesis.replace('_', '-')}, margin ${input.margin}, normal approximation (Chow, Shao & Wang 2008, ${section})`, assumptions: [...base, 'the difference is group 1 minus group 2', g.note] };
}

/**
 * Superiority and non-inferiority: the usual normal approximation of the score test, with the variance under the
 * null hypothesis (at p0, or at the margin p0 + δ) for alpha and under the alternative (p1) for power
 * (Fleiss, Levin & Paik 2003, 2.5; PASS "Tests for One Proportion"). Chow, Shao & Wang's 4.1 puts p1 q1 in both
 * terms, which gives 80 instead of 85 for 0.5 -> 0.65. Equivalence keeps Chow 4.1.3: two one-sided tests.
 */
export function oneProportion(input: ParsedSampleSizeInput): SampleSizeResult {
  const p0 = input.p0!;
  const p1 = input.p1!;
  const gap = distance(input, p1 - p0, 'p1');
  const zAlpha = zQuantile(1 - input.alpha / input.sides);
  const sdAlt = Math.sqrt(p1 * (1 - p1));
  let n: number;
  let formula: string;
  if (input.hypothesis === 'equivalence') {
    n = roundUp(((zAlpha + zPower(input)) ** 2 * sdAlt ** 2) / gap ** 2);
    formula = 'normal approximation with the variance at the expected proportion in both terms (Chow, Shao & Wang 2008, 4.1.3)';
  } else {
    const pNull = p0 + (input.hypothesis === 'non_inferiority' ? input.margin! : 0);
    if (pNull <= 0 || pNull >= 1) throw invalid('margin', `p0 + margin is ${pNull}, which must lie between 0 and 1 to be a proportion under the null hypothesis`);
    n = roundUp((zAlpha * Math.sqrt(pNull * (1 - pNull)) + zPower(input) * sdAlt) ** 2 / gap ** 2);
    formula = `normal approximation, variance under the null hypothesis for alpha, under the alternative for power (p ${pNull} and ${p1})`;
  }
  const total = roundUp(n / (1 - input.dropout));
  const hypothesis = input.hypothesis === 'non_inferiority' ? `non-inferiority, margin ${input.margin}` : input.hypothesis === 'equivalence' ? `equivalence, margin ${input.margin}` : 'superiority';
  return {
    perGroup: [total, 0],
    total,
    method: `one proportion, ${hypothesis}, ${formula}`,
    assumptions: [`proportion ${p0} under the null hypothesis, ${p1} expected, ${describe(input)}`, 'a single group: the second group is 0', input.dropout > 0 ? `${n} evaluable, inflated for ${input.dropout * 100}% dropout` : 'no dropout inflation'],
  };
}
