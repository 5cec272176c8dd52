import { ClinAgentError, errorMessage } from '../core/errors.js';
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
  /** Why the run failed; always '' when `status` is success (an answer that does not parse is a failure). */
  error: string;
  /** The trace that records this run (GET /api/traces/:id). */
  traceId: string;
  /** The conversation the turn was logged in (send it back to continue); null for a run outside any conversation. */
  conversationId: string | null;
  /** Files the run produced (a Dify app's tools, its `message_file` events); the built-in engine makes none. */
  files: AgentFile[];
}

/** A file as the engine that made it describes it; `url` is absolute. */
export interface AgentFile {
  id: string;
  type: string;
  url: string;
  belongsTo: string;
}

export function emptyResult(): AgentResult {
  return { answer: '', structuredOutput: {}, references: [], toolCalls: [], rawOutput: '', modelName: '', latencyMs: 0, status: 'failed', error: '', traceId: '', conversationId: null, files: [] };
}

/**
 * A run-level error on the result, the same for every engine: `cancelled` when the caller stopped it, `failed`
 * otherwise. Our own errors are written for the user; anything else (a database fault, a bug) may hold SQL or
 * internals, so the user gets the trace id and the detail is returned for the trace and the log.
 */
export function recordFailure(result: AgentResult, error: unknown): { internalError?: string } {
  result.status = ClinAgentError.isInstance(error) && error.code === 'CANCELLED' ? 'cancelled' : 'failed';
  if (ClinAgentError.isInstance(error)) {
    result.error = error.message;
    return {};
  }
  result.error = `The agent run failed because of an internal error. Trace ${result.traceId} and the server log have the details.`;
  return { internalError: errorMessage(error) };
}
