import type { FastifyReply } from 'fastify';

/**
 * Proxies (nginx, a hospital's gateway) close a response that stays silent for a minute or two; a model that
 * thinks for a while before its first token would lose the stream. An SSE comment line every 15 s keeps it open
 * and is ignored by every SSE parser.
 */
const HEARTBEAT_MS = 15_000;

export interface EventStream {
  /** One server-sent event: `event: <name>` and the data as one line of JSON. Ignored once the client is gone. */
  send(event: string, data: unknown): void;
  /** Aborts when the client disconnects before `end()`: pass it to the work so it stops. */
  readonly signal: AbortSignal;
  end(): void;
}

/**
 * Takes the response over from Fastify and answers `text/event-stream`. Called by a handler after its checks:
 * the access hook, validation and anything the handler throws before this still answer as JSON errors.
 */
export function openEventStream(reply: FastifyReply): EventStream {
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
