import { ClinAgentError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import { createDifyAnswerReader, type DifyAnswer, type DifyAnswerReaderOptions } from './dify-answer.js';
import type { DifyApi, DifyClient, DifyRunBody } from './dify-client.js';
import { readSse } from './read-sse.js';

interface StreamDifyAnswerOptions extends DifyAnswerReaderOptions {
  api: DifyApi;
  body: DifyRunBody;
  traceId: string;
  /** The caller's: aborted when the client leaves. */
  signal?: AbortSignal;
  /** Longest silence (pings count) before the stream is given up as dead. */
  idleTimeoutMs: number;
  logger?: Logger;
}

/**
 * Reads one streamed answer to its end (its terminal event, an `error` event, or the end of the body). A run that is
 * left (the caller's signal) or a stream gone silent stops the Dify task, which would otherwise go on generating,
 * and spending, for nobody; the answer then carries that `failure` with whatever text came before it.
 */
export async function streamDifyAnswer(client: DifyClient, options: StreamDifyAnswerOptions): Promise<DifyAnswer> {
  const reader = createDifyAnswerReader(options);
  const silence = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, silence.signal]) : silence.signal;
  let timer: NodeJS.Timeout | undefined;
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => silence.abort(), options.idleTimeoutMs);
  };
  try {
    rearm();
    const response = await client.start(options.api, options.body, { traceId: options.traceId, signal });
    if (!response.body) throw new ClinAgentError('UPSTREAM_FAILED', `The Dify app of scenario ${options.scenarioId} answered without a body.`);
    for await (const message of readSse(response.body)) {
      rearm();
      if (message.event === 'ping' || !message.data) continue;
      reader.read(parseData(message.data));
      if (reader.state.error || reader.state.ended) break;
    }
    if (!signal.aborted) return { ...reader.state, toolCalls: reader.toolCalls() };
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  const taskId = reader.state.taskId;
  if (taskId) await client.stop(options.api, taskId, options.body.user).catch((stopError: unknown) => options.logger?.warn({ scenarioId: options.scenarioId, taskId, err: stopError }, 'could not stop the Dify task'));
  // Returned, not thrown: what the app had written by then is the run's partial answer.
  const partial = { ...reader.state, toolCalls: reader.toolCalls() };
  if (options.signal?.aborted) return { ...partial, failure: new ClinAgentError('CANCELLED', 'The run was stopped; the Dify task was stopped too.') };
  return { ...partial, failure: new ClinAgentError('UPSTREAM_FAILED', `The Dify app of scenario ${options.scenarioId} sent nothing for ${Math.round(options.idleTimeoutMs / 1000)} s (not even its keep-alive ping), so the run was given up and the Dify task stopped. Check the Dify server, then try again.`, {
    difyCode: 'stream_silent',
  }) };
}

function parseData(data: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(data);
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ClinAgentError('UPSTREAM_FAILED', `The Dify app sent a stream event that is not JSON (${data.slice(0, 80)}).`);
}
