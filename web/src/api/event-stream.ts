import { createParser } from 'eventsource-parser';
import type { RunEventName, RunProgressEvent } from '../../../src/contract/run-events.js';
import { ApiError, toApiError } from './api-error';
import type { HttpClientOptions } from './http-client';

export type { RunProgressEvent };

/**
 * Every streaming route of the contract (agent runs, the trial assistant, the agents to come) sends the one run
 * vocabulary (src/contract/run-events.ts) while the server works, then exactly one `result` (the body the
 * non-streaming route answers) or `error` (the usual error body), which end the stream and settle the promise.
 */
export interface EventStreamOptions {
  onEvent(event: RunProgressEvent): void;
  /** Aborting closes the connection; the server then stops the run and marks its trace cancelled. */
  signal?: AbortSignal;
}

export type PostEventStream = <Result>(path: string, body: unknown, options: EventStreamOptions) => Promise<Result>;

/**
 * POSTs JSON (or a FormData as multipart) and reads the server-sent events of the answer over fetch. EventSource cannot POST or send an
 * Authorization header, so the events are read with eventsource-parser. Resolves to the `result` event's data;
 * rejects with an ApiError for an HTTP or stream error, and with the fetch's AbortError when `signal` is aborted.
 */
export function createEventStream(options: Pick<HttpClientOptions, 'getToken' | 'onUnauthorized' | 'fetch'>): PostEventStream {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  return async function postEventStream<Result>(path: string, body: unknown, { onEvent, signal }: EventStreamOptions): Promise<Result> {
    // A form (a file upload) goes as multipart, its boundary set by fetch; anything else as JSON.
    const isForm = body instanceof FormData;
    const headers: Record<string, string> = { accept: 'text/event-stream', ...(isForm ? {} : { 'content-type': 'application/json' }) };
    const token = options.getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await doFetch(path, { method: 'POST', headers, body: isForm ? body : JSON.stringify(body), signal });
    } catch (cause) {
      if (signal?.aborted) throw cause;
      throw new ApiError(0, 'NETWORK_ERROR', cause instanceof Error ? cause.message : String(cause));
    }
    if (!response.ok || !response.body) {
      const error = toApiError(response.status, response.statusText, parseJson(await response.text()));
      if (response.status === 401) options.onUnauthorized(error);
      throw error;
    }

    let outcome: { result: Result } | { error: ApiError } | undefined;
    const parser = createParser({
      onEvent(message) {
        const name = message.event ?? 'message';
        const data = parseJson(message.data);
        if (name === 'result') outcome = { result: data as Result };
        else if (name === 'error') outcome = { error: toApiError(500, '', data) };
        // An event a newer server added is skipped rather than misread.
        else if (RUN_EVENT_NAMES.has(name)) onEvent({ event: name, data } as RunProgressEvent);
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

/** The run vocabulary's names: listed here so the contract's zod map stays out of the bundle; `satisfies` holds them equal. */
const RUN_EVENT_NAMES: ReadonlySet<string> = new Set(
  Object.keys({ run_started: true, plan: true, part_started: true, text_delta: true, tool_call_started: true, tool_call_finished: true, round_finished: true, part_finished: true, waiting: true, text_replaced: true } satisfies Record<RunEventName, true>),
);

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
