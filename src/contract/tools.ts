import { z } from 'zod';

/**
 * POST /api/tools/sample-size: the calculator of the library's `calculateSampleSize`. The body is checked by
 * the calculator itself (its zod schema lives beside the formulas, which the contract may not import), so a bad
 * field is one 400 naming it, the same message the registry tool gives a model.
 */
export const SampleSizeRequest = z
  .looseObject({})
  .describe(
    '{design, alpha, power, sides: 1|2, ratio?, hypothesis?: superiority|non_inferiority|equivalence, margin?, dropout?, continuityCorrection?, method?: schoenfeld|freedman, ' +
      'and the design fields: meanDiff and sd or effectSize (two_means); p1 and p2 (two_proportions); p0 and p1 (one_proportion); hazardRatio and eventProbability (time_to_event)}',
  );
export type SampleSizeRequest = z.input<typeof SampleSizeRequest>;

export const SampleSizeResponse = z.object({
  perGroup: z.tuple([z.int(), z.int()]).describe('[n1, n2] after dropout; one_proportion answers [n, 0]'),
  total: z.int(),
  events: z.int().optional().describe('time_to_event only'),
  method: z.string(),
  assumptions: z.array(z.string()),
});
export type SampleSizeResponse = z.infer<typeof SampleSizeResponse>;
