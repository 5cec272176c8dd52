import { createParser } from 'eventsource-parser';
import type { AgentStreamEvent } from '../../../src/contract/agent-stream.js';
import { ApiError, toApiError } from './api-error';
import type { HttpClientOptions } from './http-client';
import type { AgentResult, AgentRunRequest } from './types';

export type { AgentStreamEvent };
/** The events that arrive while the run works; `result` and `error` end the stream and settle the promise. */
export type AgentProgressEvent = Exclude<AgentStreamEvent, { event: 'result' | 'error' }>;

export interface StreamAgentOptions {
  onEvent(event: AgentProgressEvent): void;
  /** Aborting closes the connection; the server then stops the run and marks its trace cancelled. */
  signal?: AbortSignal;
}

/**
 * POST /api/agent/run/stream over fetch. EventSource cannot POST or send an Authorization header, so the
 * events are read with eventsource-parser. Resolves to the final AgentResult; rejects with an ApiError for an
 * HTTP or stream error, and with the fetch's AbortError when `signal` is aborted.
 */
export function createAgentStream(options: Pick<HttpClientOptions, 'getToken' | 'onUnauthorized' | 'fetch'>) {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  return async function streamAgent(request: AgentRunRequest, { onEvent, signal }: StreamAgentOptions): Promise<AgentResult> {
    const headers: Record<string, string> = { accept: 'text/event-stream', 'content-type': 'application/json' };
    const token = options.getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await doFetch('/api/agent/run/stream', { method: 'POST', headers, body: JSON.stringify(request), signal });
    } catch (cause) {
      if (signal?.aborted) throw cause;
      throw new ApiError(0, 'NETWORK_ERROR', cause instanceof Error ? cause.message : String(cause));
    }
    if (!response.ok || !response.body) {
      const error = toApiError(response.status, response.statusText, parseJson(await response.text()));
      if (response.status === 401) options.onUnauthorized(error);
      throw error;
    }

    let outcome: { result: AgentResult } | { error: ApiError } | undefined;
    const parser = createParser({
      onEvent(message) {
        const event = { event: message.event ?? 'message', data: parseJson(message.data) } as AgentStreamEvent;
        if (event.event === 'result') outcome = { result: event.data };
        else if (event.event === 'error') outcome = { error: toApiError(500, '', event.data) };
        else onEvent(event);
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch (cause) {
      if (signal?.aborted) throw cause;
      throw new ApiError(0, 'NETWORK_ERROR', cause instanceof Error ? cause.message : String(cause));
    }
    if (!outcome) throw new ApiError(response.status, 'UNEXPECTED_RESPONSE', 'The answer stream ended before the result arrived.');
    if ('error' in outcome) throw outcome.error;
    return outcome.result;
  };
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
