import { z } from 'zod';
import { IdText } from './common.js';

/** GET /api/iit/projects/:projectId/rule-yield */
export const RuleYieldQuery = z.strictObject({
  skillId: IdText.optional().describe('only the rules of this skill'),
  since: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/)
    .optional()
    .describe('only queries raised at or after this ISO date or date-time, e.g. 2025-06-01'),
});
export type RuleYieldQuery = z.infer<typeof RuleYieldQuery>;

/** What one rule's queries on one field came to; counts only, never a value. */
export const RuleYieldRow = z.object({
  skillId: z.string(),
  ruleId: z.string(),
  field: z.string(),
  raised: z.int(),
  open: z.int().describe('at the site: open or reopened'),
  held: z.int().describe('raised by a run whose review has not sent it yet'),
  answered: z.int(),
  closedWithChange: z.int().describe("closed, and the query's cell changed while it was open (or the system closed it as no longer firing after the record changed)"),
  closedNoChange: z.int().describe('closed by a person without the value changing'),
  closedNoLongerFires: z.int().describe('closed by the system as no longer firing without any change to the record: the rule was fixed or removed'),
  cancelled: z.int().describe('withdrawn before it reached the site'),
  yield: z.number().nullable().describe('closedWithChange / every closed query; null while none is closed'),
  lowYield: z.boolean().describe('worth considering for central review: see thresholds'),
});
export type RuleYieldRow = z.infer<typeof RuleYieldRow>;

/** When a rule is flagged low-yield: at least `minClosed` closed queries, under `maxYield` of them changing data. */
export const LowYieldThresholds = z.object({ maxYield: z.number(), minClosed: z.int() });
export type LowYieldThresholds = z.infer<typeof LowYieldThresholds>;

export const RuleYieldList = z.object({ rules: z.array(RuleYieldRow), thresholds: LowYieldThresholds });
export type RuleYieldList = z.infer<typeof RuleYieldList>;
