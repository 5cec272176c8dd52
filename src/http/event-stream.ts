import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentEventSink } from '../runtime/loop/index.js';
import { ClinAgentError } from '../core/errors.js';

/**
 * Proxies (nginx, a hospital's gateway) close a response that stays silent for a minute or two; a model that
 * thinks for a while before its first token would lose the stream. An SSE comment line every 15 s keeps it open
 * and is ignored by every SSE parser.
 */
const HEARTBEAT_MS = 15_000;

interface EventStream {
  /** One server-sent event: `event: <name>` and the data as one line of JSON. Ignored once the client is gone. */
  send(event: string, data: unknown): void;
  /** Aborts when the client disconnects before `end()`: pass it to the work so it stops. */
  readonly signal: AbortSignal;
  end(): void;
}

/**
 * The one way a route streams a run (agent runs, the trial assistant, the agents to come): opens the stream, sends
 * every AgentEvent the work emits under its type, then exactly one final event, `result` (what the work returns,
 * the route's result body) or `error`, and ends. A ClinAgentError goes as its JSON; anything else is a fault whose
 * text stays in the log and whose event carries the request id to find it, as the JSON error handler does.
 * Call it after the route's checks: the access hook, validation and anything thrown before it answer as JSON 4xx,
 * never as a 200 followed by an error event. `signal` aborts when the client goes: pass it on so the work stops.
 */
export async function streamRun(
  reply: FastifyReply,
  request: FastifyRequest,
  work: (emit: AgentEventSink, signal: AbortSignal) => Promise<unknown>,
): Promise<void> {
  const stream = openEventStream(reply);
  try {
    const result = await work((event) => stream.send(event.type, event), stream.signal);
    stream.send('result', result);
  } catch (error) {
    if (!ClinAgentError.isInstance(error) || error.status >= 500) request.log.error({ err: error }, 'streamed run failed');
    stream.send('error', ClinAgentError.isInstance(error) ? error.toJSON() : { code: 'INTERNAL', message: `Internal error. The server log has the details under request id ${request.id}.`, details: { requestId: request.id } });
  } finally {
    stream.end();
  }
}

/** Takes the response over from Fastify and answers `text/event-stream`. */
function openEventStream(reply: FastifyReply): EventStream {
  const controller = new AbortController();
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    // no-transform: a compressing proxy would otherwise buffer the events and release them all at the end.
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const isOpen = () => !res.writableEnded && !res.destroyed;
  const heartbeat = setInterval(() => isOpen() && res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  // A ServerResponse closes when it is finished or when the connection goes; only the second is a disconnect.
  res.on('close', () => {
    clearInterval(heartbeat);
    if (!res.writableFinished) controller.abort();
  });
  return {
    signal: controller.signal,
    send(event, data) {
      // JSON.stringify escapes newlines, so the data is always one `data:` line.
      if (isOpen()) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      clearInterval(heartbeat);
      if (isOpen()) res.end();
    },
  };
}
