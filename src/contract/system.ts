import { z } from 'zod';

/** GET /api/health: liveness and a configuration summary, never a secret. */
export const Health = z.object({
  status: z.literal('ok'),
  version: z.string(),
  database: z.enum(['pglite', 'postgres']),
  vectorStore: z.boolean().describe('whether pgvector is available, so RAG works'),
  llm: z.object({
    configured: z.boolean(),
    model: z.string(),
    missing: z.array(z.string()).describe('settings still to set before agent runs can succeed, e.g. LLM_BASE_URL'),
  }),
  embedding: z.object({ model: z.string(), local: z.boolean().describe('true for the offline local embedder') }),
});
export type Health = z.infer<typeof Health>;
