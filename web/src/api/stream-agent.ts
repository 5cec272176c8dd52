import type { EventStreamOptions, PostEventStream } from './event-stream';
import type { AgentResult, AgentRunRequest } from './types';

/**
 * One agent turn as it happens: POST /api/agent/run/stream. Resolves to the final AgentResult; rejects with an
 * ApiError for an HTTP or stream error, and with the fetch's AbortError when `signal` is aborted.
 */
export function createAgentStream(postEventStream: PostEventStream) {
  return (request: AgentRunRequest, options: EventStreamOptions): Promise<AgentResult> => postEventStream<AgentResult>('/api/agent/run/stream', request, options);
}
