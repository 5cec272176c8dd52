import { z } from 'zod';

/** A queue name next to the zod schema of its payload: a job with a bad payload fails before any work. */
export interface QueueDef<T> {
  name: string;
  schema: z.ZodType<T>;
  /** pg-boss retry policy for this queue. */
  retryLimit: number;
  /** Active jobs older than this are expired and retried; long enough for a slow LLM or embedding call. */
  expireInSeconds: number;
  /**
   * pg-boss queue policy; standard unless given. `short` keeps at most one waiting job per singletonKey (a send
   * that would add a second returns null), while one of that key may already be running.
   */
  policy?: 'standard' | 'short';
}

export function defineQueue<T>(name: string, schema: z.ZodType<T>, options: Partial<Omit<QueueDef<T>, 'name' | 'schema'>> = {}): QueueDef<T> {
  return { name, schema, retryLimit: options.retryLimit ?? 3, expireInSeconds: options.expireInSeconds ?? 15 * 60, ...(options.policy ? { policy: options.policy } : {}) };
}

/**
 * Ingests the documents a scenario ships with, then builds or extends the scenario's search index (also sent after
 * an upload). One job per scenario; repeated runs are cheap (hash check, nothing left to index). Indexing 100 000
 * chunks takes minutes on PGlite, and it resumes where it stopped, so the expiry is generous.
 */
export const ingestScenarioDocumentsQueue = defineQueue('rag-ingest-scenario-documents', z.object({ scenarioId: z.string().min(1) }), { expireInSeconds: 60 * 60 });

/**
 * Builds or extends the search index of one document scope (collection and scenario id, or `project:<id>` for a
 * project's protocol documents): sent after protocol documents and the consult knowledge base change. A short
 * queue keyed by the scope (src/runtime/scope-index-job.ts), so a burst of uploads leaves one build waiting; a
 * build already running and the waiting one may overlap, which indexScope allows (each flags the chunks it
 * locked). Long expiry for the same reason as the scenario ingest.
 */
export const indexScopeQueue = defineQueue('rag-index-scope', z.object({ collection: z.string().min(1), scenarioId: z.string().min(1) }), { expireInSeconds: 60 * 60, policy: 'short' });
