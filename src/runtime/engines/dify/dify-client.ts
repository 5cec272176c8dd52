import { setTimeout as sleep } from 'node:timers/promises';
import { ClinAgentError, errorMessage } from '../../../core/errors.js';
import { difyError, readDifyErrorBody, RETRYABLE_DIFY_CODES } from './dify-errors.js';

/**
 * The body of a run (notes section 1); `response_mode` is always streaming, which agent apps require. Chat and
 * agent apps take the text as `query` and may continue a conversation; completion apps and workflows take
 * everything in `inputs`.
 */
export interface DifyRunBody {
  query?: string;
  inputs: Record<string, unknown>;
  user: string;
  conversation_id?: string;
}

/** Which API an app mode answers on: where a run starts, and where its task is stopped. */
export type DifyApi = 'chat-messages' | 'completion-messages' | 'workflows';

const START_PATH: Record<DifyApi, string> = { 'chat-messages': '/chat-messages', 'completion-messages': '/completion-messages', workflows: '/workflows/run' };
const stopPath = (api: DifyApi, taskId: string) => (api === 'workflows' ? `/workflows/tasks/${encodeURIComponent(taskId)}/stop` : `/${api}/${encodeURIComponent(taskId)}/stop`);

interface DifyClientOptions {
  scenarioId: string;
  baseUrl: string;
  apiKey: string;
  /** Waits before each retry of a `too_many_requests`; its length bounds the tries (one more than it holds). */
  retryDelaysMs: readonly number[];
  fetch?: typeof fetch;
}

/** How long a stop request may take: the user has already gone, so it must not hold the run open. */
const STOP_TIMEOUT_MS = 5_000;

/**
 * The two calls the engine makes to a Dify app. The key goes only into the Authorization header, never into a
 * URL, an error or anything returned.
 */
export function createDifyClient(options: DifyClientOptions) {
  const fetchFn = options.fetch ?? fetch;
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
  // A server may echo the key it was sent (as LLM providers do in a 401); its messages reach results and logs.
  const redact = (text: string) => text.split(options.apiKey).join('[redacted]');
  const refusalOf = async (response: Response) => {
    const body = readDifyErrorBody(response.status, await response.text().catch(() => ''));
    return { ...body, message: redact(body.message) };
  };

  async function post(path: string, body: unknown, extra: Record<string, string>, signal: AbortSignal | undefined): Promise<Response> {
    try {
      return await fetchFn(`${options.baseUrl}${path}`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body), signal });
    } catch (error) {
      if (signal?.aborted) throw cancelled();
      // fetch's own message names the host at most ("fetch failed", ECONNREFUSED), never a header.
      // fetch says "fetch failed"; why (refused connection, a host resolving to a non-public address) is its cause.
      const cause = (error as { cause?: unknown }).cause;
      const why = cause ? `${errorMessage(error)}: ${errorMessage(cause)}` : errorMessage(error);
      throw new ClinAgentError('UPSTREAM_FAILED', `The Dify app of scenario ${options.scenarioId} could not be reached at ${options.baseUrl}: ${why}. Check engine.base_url and that the Dify server is up.`, {});
    }
  }

  return {
    redact,
    /** Starts the streamed answer; a `too_many_requests` is retried after each of `retryDelaysMs`, then reported. */
    async start(api: DifyApi, body: DifyRunBody, request: { traceId: string; signal?: AbortSignal }): Promise<Response> {
      for (let attempt = 0; ; attempt++) {
        const response = await post(START_PATH[api], { ...body, response_mode: 'streaming' }, { accept: 'text/event-stream', 'x-trace-id': request.traceId }, request.signal);
        if (response.ok) return response;
        const refusal = await refusalOf(response);
        const delay = options.retryDelaysMs[attempt];
        if (!RETRYABLE_DIFY_CODES.has(refusal.code) || delay === undefined) throw difyError(options.scenarioId, refusal, 'request');
        try {
          await sleep(delay, undefined, { signal: request.signal });
        } catch {
          throw cancelled();
        }
      }
    },

    /** Stops a streamed task (the caller left); Dify answers success even for the wrong user, so failures are only logged. */
    async stop(api: DifyApi, taskId: string, user: string): Promise<void> {
      const response = await post(stopPath(api, taskId), { user }, {}, AbortSignal.timeout(STOP_TIMEOUT_MS));
      if (!response.ok) throw difyError(options.scenarioId, await refusalOf(response), 'request');
    },
  };
}

export type DifyClient = ReturnType<typeof createDifyClient>;

function cancelled(): ClinAgentError {
  return new ClinAgentError('CANCELLED', 'The run was stopped before the Dify app answered.');
}
