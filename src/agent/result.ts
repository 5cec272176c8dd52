import type { ToolCallResult } from '../core/tools/registry.js';
import type { ReferenceChunk } from '../rag/index.js';

/**
 * The one result contract of an agent run (seed 004 section 10). Every field is always present, so the
 * audit record and every client can rely on its shape whether the run succeeded or not.
 */
export interface AgentResult {
  answer: string;
  structuredOutput: Record<string, unknown>;
  references: ReferenceChunk[];
  toolCalls: ToolCallResult[];
  rawOutput: string;
  modelName: string;
  latencyMs: number;
  /** `cancelled`: the caller stopped it (closed the stream, pressed Stop). */
  status: 'success' | 'failed' | 'cancelled';
  /** Why the run failed; on a successful run, the structured-output parse error if there was one. */
  error: string;
  /** The trace that records this run (GET /api/traces/:id). */
  traceId: string;
  /** The conversation the turn was logged in (send it back to continue); null for a run outside any conversation. */
  conversationId: string | null;
}

export function emptyResult(): AgentResult {
  return { answer: '', structuredOutput: {}, references: [], toolCalls: [], rawOutput: '', modelName: '', latencyMs: 0, status: 'failed', error: '', traceId: '', conversationId: null };
}
