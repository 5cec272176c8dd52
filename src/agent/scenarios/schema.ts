import { z } from 'zod';

/** A scenario file as written by a user (snake_case, YAML or JSON). */
const jsonSchemaObject = z.record(z.string(), z.unknown()).refine((schema) => schema.type === 'object', {
  message: 'must be a JSON Schema whose "type" is "object"',
});

export const outputTypeField = z.union([
  z.string().min(1),
  z.object({ name: z.string().min(1), schema: jsonSchemaObject, answer_field: z.string().optional() }).strict(),
]);

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
  })
  .strict();

export type ScenarioFile = z.infer<typeof scenarioFileSchema>;
