import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../../core/errors.js';
import { calculateSampleSize, calculateSampleSizeTool, type SampleSizeInput } from './index.js';

// Normal quantiles from printed tables (R qnorm), so the closed forms below do not reuse the code's quantile function.
const Z = { '0.975': 1.959964, '0.95': 1.644854, '0.9': 1.281552, '0.8': 0.841621 };

const base = { alpha: 0.05, power: 0.8, sides: 2 } as const;

describe('calculateSampleSize against published reference values', () => {
  it('two means, two-sided: R pwr.t.test(d = 0.5, power = 0.8, sig.level = 0.05) gives n = 63.77, G*Power 64 per group, total 128', () => {
    const result = calculateSampleSize({ ...base, design: 'two_means', effectSize: 0.5 });
    expect(result).toMatchObject({ perGroup: [64, 64], total: 128 });
    expect(result.method).toContain('noncentral t');
  });

  it('two means from meanDiff and sd is the same d: meanDiff 5, sd 10 -> 64 per group (pwr.t.test)', () => {
    expect(calculateSampleSize({ ...base, design: 'two_means', meanDiff: 5, sd: 10 }).perGroup).toEqual([64, 64]);
  });

  it('two means, one-sided: R pwr.t.test(d = 0.5, power = 0.8, alternative = "greater") gives n = 50.15 -> 51', () => {
    expect(calculateSampleSize({ ...base, sides: 1, design: 'two_means', effectSize: 0.5 }).perGroup).toEqual([51, 51]);
  });

  it('two means, non-inferiority (Chow 3.2.2): the test of meanDiff - margin one-sided, so meanDiff 0, margin -5, sd 10 equals pwr.t.test d = 0.5 "greater" -> 51', () => {
    const result = calculateSampleSize({ ...base, sides: 1, design: 'two_means', meanDiff: 0, sd: 10, hypothesis: 'non_inferiority', margin: -5 });
    expect(result.perGroup).toEqual([51, 51]);
  });

  it('two means, equivalence (Chow 3.2.3): n = (z(1-a) + z(1-b/2))^2 * 2 * sd^2 / (margin - |diff|)^2', () => {
    const expected = Math.ceil(((Z['0.95'] + Z['0.9']) ** 2 * 2 * 1) / 0.5 ** 2); // 68.5 -> 69
    expect(expected).toBe(69);
    const result = calculateSampleSize({ ...base, sides: 1, design: 'two_means', meanDiff: 0, sd: 1, hypothesis: 'equivalence', margin: 0.5 });
    expect(result.perGroup).toEqual([expected, expected]);
  });

  it('dropout inflates n / (1 - dropout), rounded up: 64 with 20% dropout -> 80 per group', () => {
    expect(calculateSampleSize({ ...base, design: 'two_means', effectSize: 0.5, dropout: 0.2 })).toMatchObject({ perGroup: [80, 80], total: 160 });
  });

  it('two proportions: R power.prop.test(p1 = .50, p2 = .75, power = .90) documents n = 76.7 -> 77 per group', () => {
    const result = calculateSampleSize({ ...base, power: 0.9, design: 'two_proportions', p1: 0.5, p2: 0.75 });
    expect(result).toMatchObject({ perGroup: [77, 77], total: 154 });
  });

  it('two proportions with the Fleiss-Tytun-Ury continuity correction: n/4 * (1 + sqrt(1 + 4 / (n * |p1 - p2|)))^2', () => {
    const pBar = 0.625;
    const n = (Z['0.975'] * Math.sqrt(2 * pBar * (1 - pBar)) + Z['0.9'] * Math.sqrt(0.25 + 0.1875)) ** 2 / 0.25 ** 2; // 76.7
    const expected = Math.ceil((n / 4) * (1 + Math.sqrt(1 + 4 / (n * 0.25))) ** 2); // 84.5 -> 85
    expect(expected).toBe(85);
    const result = calculateSampleSize({ ...base, power: 0.9, design: 'two_proportions', p1: 0.5, p2: 0.75, continuityCorrection: true });
    expect(result.perGroup).toEqual([expected, expected]);
    expect(result.method).toContain('continuity correction');
  });

  it('two proportions, unequal allocation (Fleiss): n1 from pooled and unpooled variances, n2 = ratio * n1', () => {
    const k = 2;
    const pBar = (0.5 + k * 0.75) / (1 + k);
    const n1 = (Z['0.975'] * Math.sqrt(pBar * (1 - pBar) * (1 + 1 / k)) + Z['0.9'] * Math.sqrt(0.25 + 0.1875 / k)) ** 2 / 0.25 ** 2;
    const result = calculateSampleSize({ ...base, power: 0.9, design: 'two_proportions', p1: 0.5, p2: 0.75, ratio: k });
    expect(result.perGroup).toEqual([Math.ceil(n1), Math.ceil(n1 * k)]);
  });

  it('two proportions, non-inferiority (Chow 4.2.2): n = (z(1-a) + z(1-b))^2 (p1 q1 + p2 q2) / (diff - margin)^2', () => {
    const expected = Math.ceil(((Z['0.95'] + Z['0.8']) ** 2 * (0.75 * 0.25 * 2)) / 0.1 ** 2); // 231.8 -> 232
    expect(expected).toBe(232);
    const result = calculateSampleSize({ ...base, sides: 1, design: 'two_proportions', p1: 0.75, p2: 0.75, hypothesis: 'non_inferiority', margin: -0.1 });
    expect(result.perGroup).toEqual([expected, expected]);
  });

  it('one proportion, issue 32: 0.5 -> 0.65 needs 85 (null variance for alpha, alternative for beta), not 80 (p1 q1 in both terms)', () => {
    // n = (z(1-a/2) sqrt(p0 q0) + z(1-b) sqrt(p1 q1))^2 / (p1 - p0)^2 = 84.8 -> 85; R pwr.p.test (arcsine h = 0.3047) gives 84.5 -> 85.
    const expected = Math.ceil((Z['0.975'] * Math.sqrt(0.25) + Z['0.8'] * Math.sqrt(0.65 * 0.35)) ** 2 / 0.15 ** 2);
    expect(expected).toBe(85);
    const result = calculateSampleSize({ ...base, design: 'one_proportion', p0: 0.5, p1: 0.65 });
    expect(result).toMatchObject({ perGroup: [85, 0], total: 85 });
    expect(result.method).toContain('variance under the null hypothesis for alpha, under the alternative for power');
  });

  it('one proportion, p0 0.3 -> p1 0.5: (1.96 sqrt(.21) + 0.8416 sqrt(.25))^2 / 0.04 = 43.5 -> 44', () => {
    const expected = Math.ceil((Z['0.975'] * Math.sqrt(0.21) + Z['0.8'] * 0.5) ** 2 / 0.2 ** 2);
    expect(expected).toBe(44);
    expect(calculateSampleSize({ ...base, design: 'one_proportion', p0: 0.3, p1: 0.5 })).toMatchObject({ perGroup: [expected, 0], total: expected });
  });

  it('one proportion, non-inferiority: the null variance is at the margin, p0 + margin', () => {
    // p0 0.8, margin -0.1: the null boundary is 0.7; expected 0.8, one-sided alpha 0.05.
    const expected = Math.ceil((Z['0.95'] * Math.sqrt(0.7 * 0.3) + Z['0.8'] * Math.sqrt(0.8 * 0.2)) ** 2 / 0.1 ** 2);
    expect(expected).toBe(119);
    const result = calculateSampleSize({ ...base, sides: 1, design: 'one_proportion', p0: 0.8, p1: 0.8, hypothesis: 'non_inferiority', margin: -0.1 });
    expect(result.total).toBe(expected);
  });

  it('one proportion, equivalence keeps Chow 4.1.3 (p1 q1 in both terms) and says so', () => {
    const expected = Math.ceil(((Z['0.95'] + Z['0.9']) ** 2 * 0.25) / 0.1 ** 2);
    const result = calculateSampleSize({ ...base, sides: 1, design: 'one_proportion', p0: 0.5, p1: 0.5, hypothesis: 'equivalence', margin: 0.1 });
    expect(result.total).toBe(expected);
    expect(result.method).toContain('variance at the expected proportion in both terms');
  });

  it('time to event: Schoenfeld, HR 0.7, alpha .05 two-sided, power .8, 1:1 -> 247 events; patients = events / event probability', () => {
    const result = calculateSampleSize({ ...base, design: 'time_to_event', hazardRatio: 0.7, eventProbability: 0.5 });
    expect(result).toMatchObject({ events: 247, perGroup: [247, 247], total: 494 });
    expect(result.method).toContain('Schoenfeld');
  });

  it('time to event: Freedman, events = (z(1-a/2) + z(1-b))^2 (1 + HR)^2 / (1 - HR)^2 -> 253 for HR 0.7', () => {
    const expected = Math.ceil(((Z['0.975'] + Z['0.8']) ** 2 * 1.7 ** 2) / 0.3 ** 2); // 252.04 -> 253
    expect(expected).toBe(253);
    const result = calculateSampleSize({ ...base, design: 'time_to_event', hazardRatio: 0.7, eventProbability: 1, method: 'freedman' });
    expect(result.events).toBe(expected);
    expect(result.method).toContain('Freedman');
  });

  // Issue 32: with ratio = n2 / n1 and the hazard ratio group 1 versus group 2, Freedman (1982) takes phi = n1 / n2,
  // events = (z(1-a/2) + z(1-b))^2 (1 + phi HR)^2 / (phi (1 - HR)^2). Expected values worked by hand from that formula.
  it.each([
    [0.7, 2, 0.8, 318],
    [0.7, 0.5, 0.8, 252],
    [0.5, 3, 0.9, 172],
  ])('time to event: Freedman, HR %s, ratio n2/n1 = %s, power %s -> %s events (phi = n1/n2)', (hazardRatio, ratio, power, events) => {
    const phi = 1 / ratio;
    const zBeta = power === 0.9 ? Z['0.9'] : Z['0.8'];
    const byHand = Math.ceil(((Z['0.975'] + zBeta) ** 2 * (1 + phi * hazardRatio) ** 2) / (phi * (1 - hazardRatio) ** 2));
    expect(byHand).toBe(events);
    const result = calculateSampleSize({ ...base, power, design: 'time_to_event', hazardRatio, ratio, eventProbability: 1, method: 'freedman' });
    expect(result.events).toBe(events);
  });

  it('time to event: Schoenfeld is symmetric in the allocation, (1 + k)^2 / k: ratio 2 and ratio 0.5 need the same events', () => {
    const byHand = Math.ceil(((Z['0.975'] + Z['0.8']) ** 2 * 3 ** 2) / (2 * Math.log(0.7) ** 2)); // 277.6 -> 278
    expect(byHand).toBe(278);
    for (const ratio of [2, 0.5]) {
      expect(calculateSampleSize({ ...base, design: 'time_to_event', hazardRatio: 0.7, ratio, eventProbability: 1 }).events).toBe(byHand);
    }
  });

  it('time to event, unequal allocation: patients split n1 = N / (1 + ratio), n2 = ratio * n1', () => {
    const result = calculateSampleSize({ ...base, design: 'time_to_event', hazardRatio: 0.7, ratio: 2, eventProbability: 0.5, method: 'freedman' });
    // 318 events / 0.5 = 636 patients: 212 in group 1, 424 in group 2.
    expect(result).toMatchObject({ events: 318, perGroup: [212, 424], total: 636 });
  });

  it('two means, unequal allocation: pwr.t2n.test(n1 = 48, n2 = 96, d = 0.5) has power 0.802, (47, 94) only 0.794', () => {
    // Var(mean1 - mean2) = sd^2 (1/n1 + 1/n2) = sd^2 (1 + 1/ratio) / n1: the normal approximation gives 47.1 for group 1.
    const normal = ((Z['0.975'] + Z['0.8']) ** 2 * 1.5) / 0.25;
    expect(Math.ceil(normal)).toBe(48);
    expect(calculateSampleSize({ ...base, design: 'two_means', effectSize: 0.5, ratio: 2 }).perGroup).toEqual([48, 96]);
    // Ratio 0.5 puts the larger group first: pwr.t2n.test(n1 = 95, n2 = 48) has power 0.8007, (94, 47) 0.794.
    expect(calculateSampleSize({ ...base, design: 'two_means', effectSize: 0.5, ratio: 0.5 }).perGroup).toEqual([95, 48]);
  });

  it('the registry tool runs the same calculation from its schema-parsed arguments', async () => {
    const tool = calculateSampleSizeTool();
    expect(tool.name).toBe('calculate_sample_size');
    const args = tool.schema.parse({ ...base, design: 'two_means', effectSize: 0.5 });
    expect(await tool.run(args)).toMatchObject({ perGroup: [64, 64], total: 128 });
  });
});

describe('the assumptions a protocol quotes', () => {
  const internal = /\b(meanDiff|sd|p0|p1|p2|n1|n2|perGroup|hazardRatio|eventProbability)\b/;

  it('are written in words, never with the input names', () => {
    const twoMeans = calculateSampleSize({ ...base, design: 'two_means', meanDiff: 5, sd: 10 });
    expect(twoMeans.assumptions[0]).toContain('mean difference 5 (group 1 minus group 2), standard deviation 10');
    const twoProportions = calculateSampleSize({ ...base, design: 'two_proportions', p1: 0.5, p2: 0.75, ratio: 2 });
    expect(twoProportions.assumptions[0]).toContain('proportion 0.5 in group 1 and 0.75 in group 2');
    expect(twoProportions.assumptions[0]).toContain('allocation ratio 1:2 (group 1 : group 2)');
    const single = calculateSampleSize({ ...base, design: 'one_proportion', p0: 0.3, p1: 0.5 });
    const survival = calculateSampleSize({ ...base, design: 'time_to_event', hazardRatio: 0.7, eventProbability: 0.5 });
    for (const result of [twoMeans, twoProportions, single, survival]) for (const line of result.assumptions) expect(line).not.toMatch(internal);
  });
});

describe('calculateSampleSize rejects invalid input, naming the field', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['power above 1', { ...base, design: 'two_means', effectSize: 0.5, power: 1.2 }, 'power'],
    ['alpha of 0', { ...base, design: 'two_means', effectSize: 0.5, alpha: 0 }, 'alpha'],
    ['sides 3', { ...base, design: 'two_means', effectSize: 0.5, sides: 3 }, 'sides'],
    ['p outside 0..1', { ...base, design: 'two_proportions', p1: 1.5, p2: 0.5 }, 'p1'],
    ['two_means without sd', { ...base, design: 'two_means', meanDiff: 5 }, 'sd'],
    ['two_proportions without p2', { ...base, design: 'two_proportions', p1: 0.5 }, 'p2'],
    ['time_to_event without hazardRatio', { ...base, design: 'time_to_event', eventProbability: 0.5 }, 'hazardRatio'],
    ['a positive non-inferiority margin', { ...base, design: 'two_proportions', p1: 0.7, p2: 0.7, hypothesis: 'non_inferiority', margin: 0.1 }, 'margin'],
    ['a negative equivalence margin', { ...base, design: 'two_means', meanDiff: 0, sd: 1, hypothesis: 'equivalence', margin: -0.5 }, 'margin'],
    ['an equivalence margin below the expected difference', { ...base, design: 'two_means', meanDiff: 1, sd: 1, hypothesis: 'equivalence', margin: 0.5 }, 'margin'],
    ['dropout of 1', { ...base, design: 'two_means', effectSize: 0.5, dropout: 1 }, 'dropout'],
    ['an unknown design', { ...base, design: 'crossover' }, 'design'],
    ['equal proportions', { ...base, design: 'two_proportions', p1: 0.5, p2: 0.5 }, 'p2'],
    ['time_to_event non-inferiority, not supported yet', { ...base, design: 'time_to_event', hazardRatio: 0.8, eventProbability: 0.5, hypothesis: 'non_inferiority', margin: -0.1 }, 'hypothesis'],
  ];
  it.each(cases)('%s', (_label, input, field) => {
    let error: unknown;
    try {
      calculateSampleSize(input as SampleSizeInput);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ClinAgentError);
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
    expect((error as Error).message).toContain(field);
  });
});
