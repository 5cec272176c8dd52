import { createParser } from 'eventsource-parser';
import { ApiError, toApiError } from './api-error';
import type { HttpClientOptions } from './http-client';

/**
 * Every streaming route of the contract (agent runs, the trial assistant's chat) sends named progress events,
 * then exactly one `result` (the body the non-streaming route answers) or `error` (the usual error body).
 * ProgressEventOf is what arrives while the server works; `result` and `error` end the stream and settle the promise.
 */
export type ProgressEventOf<Events extends { event: string }> = Exclude<Events, { event: 'result' | 'error' }>;
type ResultOf<Events extends { event: string; data: unknown }> = Extract<Events, { event: 'result' }>['data'];

export interface EventStreamOptions<Progress> {
  onEvent(event: Progress): void;
  /** Aborting closes the connection; the server then stops the run and marks its trace cancelled. */
  signal?: AbortSignal;
}

export type PostEventStream = <Events extends { event: string; data: unknown }>(
  path: string,
  body: unknown,
  options: EventStreamOptions<ProgressEventOf<Events>>,
) => Promise<ResultOf<Events>>;

/**
 * POSTs JSON and reads the server-sent events of the answer over fetch. EventSource cannot POST or send an
 * Authorization header, so the events are read with eventsource-parser. Resolves to the `result` event's data;
 * rejects with an ApiError for an HTTP or stream error, and with the fetch's AbortError when `signal` is aborted.
 */
export function createEventStream(options: Pick<HttpClientOptions, 'getToken' | 'onUnauthorized' | 'fetch'>): PostEventStream {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  return async function postEventStream<Events extends { event: string; data: unknown }>(
    path: string,
    body: unknown,
    { onEvent, signal }: EventStreamOptions<ProgressEventOf<Events>>,
  ): Promise<ResultOf<Events>> {
    const headers: Record<string, string> = { accept: 'text/event-stream', 'content-type': 'application/json' };
    const token = options.getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await doFetch(path, { method: 'POST', headers, body: JSON.stringify(body), signal });
    } catch (cause) {
      if (signal?.aborted) throw cause;
      throw new ApiError(0, 'NETWORK_ERROR', cause instanceof Error ? cause.message : String(cause));
    }
    if (!response.ok || !response.body) {
      const error = toApiError(response.status, response.statusText, parseJson(await response.text()));
      if (response.status === 401) options.onUnauthorized(error);
      throw error;
    }

    let outcome: { result: ResultOf<Events> } | { error: ApiError } | undefined;
    const parser = createParser({
      onEvent(message) {
        const name = message.event ?? 'message';
        const data = parseJson(message.data);
        if (name === 'result') outcome = { result: data as ResultOf<Events> };
        else if (name === 'error') outcome = { error: toApiError(500, '', data) };
        else onEvent({ event: name, data } as ProgressEventOf<Events>);
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
