import { z } from 'zod';

/** A scenario file as written by a user (snake_case, YAML or JSON). */
const jsonSchemaObject = z.record(z.string(), z.unknown()).refine((schema) => schema.type === 'object', {
  message: 'must be a JSON Schema whose "type" is "object"',
});

export const outputTypeField = z.union([
  z.string().min(1),
  z.object({ name: z.string().min(1), schema: jsonSchemaObject, answer_field: z.string().optional() }).strict(),
]);

/**
 * How much of a conversation the model sees again (agent/conversations/history-strategy.ts). Default: every
 * turn, capped at 8000 tokens. `max_turns` belongs to sliding_window, `keep_turns` to summary.
 */
const historyBlock = z
  .object({
    strategy: z.enum(['full', 'sliding_window', 'summary']).default('full'),
    max_turns: z.number().int().min(1).max(1000).optional(),
    max_tokens: z.number().int().min(100).max(200_000).default(8000),
    keep_turns: z.number().int().min(1).max(1000).optional(),
  })
  .strict()
  .superRefine((history, ctx) => {
    if (history.strategy === 'summary' && history.keep_turns === undefined) ctx.addIssue({ code: 'custom', path: ['keep_turns'], message: 'required when strategy is summary: how many recent turns stay verbatim' });
    if (history.strategy !== 'summary' && history.keep_turns !== undefined) ctx.addIssue({ code: 'custom', path: ['keep_turns'], message: 'applies only to strategy summary' });
    if (history.strategy !== 'sliding_window' && history.max_turns !== undefined) ctx.addIssue({ code: 'custom', path: ['max_turns'], message: 'applies only to strategy sliding_window' });
  })
  .default({ strategy: 'full', max_tokens: 8000 });

export const scenarioFileSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 lowercase letters, digits, - or _, starting with a letter or digit'),
    name: z.string().min(1),
    description: z.string().default(''),
    system_prompt: z.string().min(1, 'must not be empty: it is the instruction the model works from'),
    rag: z
      .object({
        enabled: z.boolean().default(false),
        collection: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'must be 1-64 letters, digits, - or _').optional(),
        top_k: z.number().int().min(1).max(50).default(5),
        max_context_tokens: z.number().int().min(100).max(100_000).default(3000),
      })
      .strict()
      .default({ enabled: false, top_k: 5, max_context_tokens: 3000 }),
    tools: z.array(z.string().min(1)).default([]),
    output_type: outputTypeField.default('text'),
    model: z
      .object({
        name: z.string().min(1).optional(),
        temperature: z.number().min(0).max(2).optional(),
        max_tokens: z.number().int().min(1).max(200_000).optional(),
      })
      .strict()
      .default({}),
    max_tool_rounds: z.number().int().min(0).max(20).default(4),
    documents: z.array(z.string().min(1)).default([]),
    history: historyBlock,
  })
  .strict();

export type ScenarioFile = z.infer<typeof scenarioFileSchema>;
