import { z } from 'zod';

/**
 * The shape of one hard rule. Strict, because a misspelt key ("serverity") would otherwise be dropped and the
 * rule would silently run with the default.
 */
export const hardRuleSchema = z
  .object({
    id: z.string().min(1, 'must not be empty; leave it out to use "<field>#<index>"').optional(),
    field: z.string().min(1, 'must name the record field the rule checks'),
    logic: z.unknown().refine((value) => value !== undefined, { message: 'is required: a JSON Logic expression' }),
    message: z.string().min(1, 'must tell the site what to fix'),
    severity: z.enum(['error', 'warning', 'info'], { error: 'must be one of error, warning, info' }).optional(),
  })
  .strict();
