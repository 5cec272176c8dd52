import { z } from 'zod';

/**
 * A QC skill as written by a user (YAML): an SOP flowchart of nodes (seed 000 section 4.2). A node id that
 * starts with `end` is a terminal state (end_ok, end_rejected, end_error, ...).
 */
const target = z.string().min(1);

const hardRuleSchema = z
  .object({
    id: z.string().min(1).optional(),
    field: z.string().min(1),
    logic: z.unknown().refine((v) => v !== undefined, { message: 'is required: a JSON Logic expression' }),
    message: z.string().min(1),
    severity: z.enum(['error', 'warning', 'info']).optional(),
  })
  .strict();

const hardRuleNode = z
  .object({ type: z.literal('hard_rule'), description: z.string().optional(), rules: z.array(hardRuleSchema).min(1, 'needs at least one rule'), on_pass: target, on_fail: target, on_error: target.optional() })
  .strict();

const softInstructionNode = z
  .object({
    type: z.literal('soft_instruction'),
    description: z.string().optional(),
    instruction: z.string().min(1),
    /** The record field a failed check is attached to, for the query it opens. */
    field: z.string().min(1).default('(record)'),
    severity: z.enum(['error', 'warning', 'info']).default('warning'),
    tools: z.array(z.string().min(1)).default([]),
    max_retries: z.number().int().min(1).max(10).default(3),
    on_pass: target,
    on_fail: target,
    on_error: target.optional(),
  })
  .strict();

const humanReviewNode = z
  .object({
    type: z.literal('human_review'),
    description: z.string().min(1, 'tell the reviewer what to review'),
    on_approve: target,
    on_reject: target,
    /**
     * What a reject does to the queries this run raised and the review holds back: `cancel` (withdrawn, the site
     * never sees them; the default, for "findings are false positives") or `close` (kept as resolved).
     */
    on_reject_queries: z.enum(['cancel', 'close']).default('cancel'),
  })
  .strict();

export const sopNodeSchema = z.discriminatedUnion('type', [hardRuleNode, softInstructionNode, humanReviewNode], {
  error: (issue) => (issue.code === 'invalid_union' ? 'type must be one of hard_rule, soft_instruction, human_review' : undefined),
});

export const skillFileSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 lowercase letters, digits, - or _'),
    name: z.string().min(1),
    description: z.string().default(''),
    /** Project ids the skill applies to; absent means every project. */
    projects: z.array(z.string().min(1)).optional(),
    /** Cron expression (5 fields, UTC) for scheduled runs over all records. */
    schedule: z.string().regex(/^(\S+\s+){4}\S+$/, 'must be a 5-field cron expression, e.g. "0 6 * * 1" (Mondays 06:00 UTC)').optional(),
    start_node: z.string().min(1),
    nodes: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'node ids are letters, digits, _ or -'), sopNodeSchema),
  })
  .strict();

export type SkillFile = z.infer<typeof skillFileSchema>;
export type SopNode = z.infer<typeof sopNodeSchema>;
