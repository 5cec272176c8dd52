import type { AgentStreamEvent } from '../../../src/contract/agent-stream.js';
import type { PostEventStream, ProgressEventOf } from './event-stream';
import type { AgentResult, AgentRunRequest } from './types';

export type { AgentStreamEvent };
/** The events that arrive while the run works; `result` and `error` end the stream and settle the promise. */
export type AgentProgressEvent = ProgressEventOf<AgentStreamEvent>;

export interface StreamAgentOptions {
  onEvent(event: AgentProgressEvent): void;
  /** Aborting closes the connection; the server then stops the run and marks its trace cancelled. */
  signal?: AbortSignal;
}

/**
 * One agent turn as it happens: POST /api/agent/run/stream. Resolves to the final AgentResult; rejects with an
 * ApiError for an HTTP or stream error, and with the fetch's AbortError when `signal` is aborted.
 */
export function createAgentStream(postEventStream: PostEventStream) {
  return (request: AgentRunRequest, options: StreamAgentOptions): Promise<AgentResult> =>
    postEventStream<AgentStreamEvent>('/api/agent/run/stream', request, options);
}
