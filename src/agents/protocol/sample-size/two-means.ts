import type { ParsedSampleSizeInput } from './input.js';
import { invalid } from './input.js';
import { noncentralTCdf, tQuantile, zQuantile } from './quantiles.js';
import { allocationRatio, groups, roundUp, type SampleSizeResult } from './result.js';

const MAX_N1 = 1_000_000;

/** Power of the two-sample t-test with n1, n2 subjects and a standardized shift `delta` (G*Power's formula). */
function tTestPower(n1: number, n2: number, delta: number, alphaSide: number, twoTailed: boolean): number {
  const df = n1 + n2 - 2;
  const ncp = delta / Math.sqrt(1 / n1 + 1 / n2);
  const tCrit = tQuantile(1 - alphaSide, df);
  const upper = 1 - noncentralTCdf(tCrit, df, ncp);
  return twoTailed ? upper + noncentralTCdf(-tCrit, df, ncp) : upper;
}

export function twoMeans(input: ParsedSampleSizeInput): SampleSizeResult {
  const standardized = input.effectSize !== undefined;
  const d = input.effectSize ?? input.meanDiff! / input.sd!;
  const margin = (input.margin ?? 0) / (standardized ? 1 : input.sd!);
  const alphaSide = input.alpha / input.sides;
  const zBeta = zQuantile(input.power);
  const scale = standardized ? `standardised effect size (Cohen's d) ${input.effectSize}` : `mean difference ${input.meanDiff} (group 1 minus group 2), standard deviation ${input.sd}`;
  const base = [`${scale}, alpha ${input.alpha} (${input.sides}-sided: each side at ${alphaSide}), power ${input.power}, ${allocationRatio(input.ratio)}`];

  if (input.hypothesis === 'equivalence') {
    if (Math.abs(d) >= margin) throw invalid('margin', `for equivalence the margin must exceed the absolute expected difference; got ${input.margin}`);
    const n1 = ((zQuantile(1 - alphaSide) + zQuantile(1 - (1 - input.power) / 2)) ** 2 * (1 + 1 / input.ratio)) / (margin - Math.abs(d)) ** 2;
    const g = groups(n1, input.ratio, input.dropout);
    return { perGroup: g.perGroup, total: g.total, method: 'two means, equivalence, two one-sided tests, normal approximation (Chow, Shao & Wang 2008, 3.2.3)', assumptions: [...base, `margin ±${input.margin}`, g.note] };
  }

  const shift = d - margin;
  if (shift === 0 || (input.hypothesis === 'non_inferiority' && shift < 0)) {
    throw invalid(input.hypothesis === 'superiority' ? 'meanDiff' : 'margin', input.hypothesis === 'superiority' ? 'a difference of 0 cannot be detected' : 'the expected difference must lie above the non-inferiority margin');
  }
  const twoTailed = input.hypothesis === 'superiority' && input.sides === 2;
  // The t-based n is never below the normal one, so the search starts there rather than at 2.
  let n1 = Math.max(2, Math.floor(((zQuantile(1 - alphaSide) + zBeta) ** 2 * (1 + 1 / input.ratio)) / shift ** 2));
  const n2Of = (n: number) => Math.max(2, Math.ceil(n * input.ratio - 1e-9));
  while (tTestPower(n1, n2Of(n1), Math.abs(shift), alphaSide, twoTailed) < input.power) {
    if (++n1 > MAX_N1) throw invalid('meanDiff', `the difference is too small: more than ${MAX_N1} per group would be needed`);
  }
  const n2 = n2Of(n1);
  const perGroup: [number, number] = [roundUp(n1 / (1 - input.dropout)), roundUp(n2 / (1 - input.dropout))];
  const hypothesis = input.hypothesis === 'non_inferiority' ? `non-inferiority, margin ${input.margin} (Chow, Shao & Wang 2008, 3.2.2)` : 'superiority';
  return {
    perGroup,
    total: perGroup[0] + perGroup[1],
    method: `two means, ${hypothesis}, t-test iterated on the noncentral t (as G*Power)`,
    assumptions: [...base, `${n1} + ${n2} evaluable (group 1 + group 2)`, input.dropout > 0 ? `inflated for ${input.dropout * 100}% dropout as n / (1 - dropout), rounded up` : 'no dropout inflation'],
  };
}
