import { z } from 'zod';
import { ClinAgentError } from '../../../core/errors.js';

const probability = (what: string) => z.number().min(0, `${what} is a probability: between 0 and 1`).max(1, `${what} is a probability: between 0 and 1`);

/**
 * One flat object rather than a union per design, so a model calling the tool sees every field in one
 * schema; what each design needs is checked in `superRefine`, naming the field.
 */
export const SampleSizeInputSchema = z
  .object({
    design: z.enum(['two_means', 'two_proportions', 'one_proportion', 'time_to_event']),
    alpha: z.number().gt(0, 'alpha must be above 0').lt(0.5, 'alpha must be below 0.5, e.g. 0.05').describe('type I error, e.g. 0.05'),
    power: z.number().gt(0, 'power must be above 0').lt(1, 'power must be below 1, e.g. 0.8 or 0.9').describe('1 - type II error, e.g. 0.8'),
    sides: z.union([z.literal(1), z.literal(2)]).describe('1 or 2; each one-sided test runs at alpha / sides'),
    ratio: z.number().positive('ratio is n2 / n1 and must be above 0').default(1).describe('allocation ratio n2 / n1'),
    hypothesis: z.enum(['superiority', 'non_inferiority', 'equivalence']).default('superiority'),
    margin: z
      .number()
      .optional()
      .describe('Chow et al. convention, on the scale of group 1 minus group 2: negative for non_inferiority, positive for equivalence'),
    dropout: z.number().min(0, 'dropout is a fraction: 0 or more').lt(1, 'dropout is a fraction below 1, e.g. 0.1').default(0),
    meanDiff: z.number().optional().describe('two_means: mean of group 1 minus mean of group 2'),
    sd: z.number().positive('sd must be above 0').optional().describe('two_means: common standard deviation'),
    effectSize: z.number().optional().describe("two_means: Cohen's d, instead of meanDiff and sd (the margin is then in SD units)"),
    p0: probability('p0').optional().describe('one_proportion: the proportion under the null hypothesis'),
    p1: probability('p1').optional().describe('two_proportions: group 1; one_proportion: the expected proportion'),
    p2: probability('p2').optional().describe('two_proportions: group 2'),
    continuityCorrection: z.boolean().default(false).describe('two_proportions, superiority: Fleiss continuity correction'),
    hazardRatio: z.number().positive('hazardRatio must be above 0').optional().describe('time_to_event: group 1 vs group 2'),
    eventProbability: z.number().gt(0, 'eventProbability must be above 0').max(1, 'eventProbability is at most 1').optional().describe('time_to_event: chance a patient has the event during the study'),
    method: z.enum(['schoenfeld', 'freedman']).default('schoenfeld').describe('time_to_event: how events are computed'),
  })
  .superRefine((input, ctx) => {
    const need = (field: keyof typeof input, why: string) => {
      if (input[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required ${why}` });
    };
    if (input.design === 'two_means' && input.effectSize === undefined) {
      need('meanDiff', 'for two_means (or give effectSize)');
      need('sd', 'for two_means (or give effectSize)');
    }
    if (input.design === 'two_proportions') (['p1', 'p2'] as const).forEach((f) => need(f, 'for two_proportions'));
    if (input.design === 'one_proportion') (['p0', 'p1'] as const).forEach((f) => need(f, 'for one_proportion'));
    if (input.design === 'time_to_event') {
      need('hazardRatio', 'for time_to_event');
      need('eventProbability', 'for time_to_event (patients = events / eventProbability)');
    }
    if (input.hypothesis === 'superiority' && input.margin !== undefined && input.margin !== 0) {
      ctx.addIssue({ code: 'custom', path: ['margin'], message: 'margin applies to non_inferiority and equivalence; superiority by a margin is not supported yet' });
    }
    if (input.hypothesis === 'non_inferiority' && !(input.margin! < 0)) {
      ctx.addIssue({ code: 'custom', path: ['margin'], message: 'margin is required for non_inferiority and must be negative (group 1 minus group 2, Chow et al.)' });
    }
    if (input.hypothesis === 'equivalence' && !(input.margin! > 0)) {
      ctx.addIssue({ code: 'custom', path: ['margin'], message: 'margin is required for equivalence and must be positive (Chow et al.)' });
    }
  });

export type SampleSizeInput = z.input<typeof SampleSizeInputSchema>;
export type ParsedSampleSizeInput = z.output<typeof SampleSizeInputSchema>;

export function invalid(field: string, message: string): ClinAgentError {
  return new ClinAgentError('VALIDATION_FAILED', `Sample size input ${field}: ${message}.`, { field });
}

export function parseSampleSizeInput(input: unknown): ParsedSampleSizeInput {
  const parsed = SampleSizeInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join('.') || 'input';
  throw invalid(field, issue.message);
}
