/** One server-sent event: its `event:` name ("message" when absent) and its `data:` lines joined. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The events of a `text/event-stream` body as they arrive. Dify sends `data: {json}` blocks and bare `event: ping`
 * keep-alives; both are parsed by the SSE rules (blank line ends an event, `:` starts a comment, CR/LF/CRLF).
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  const flush = (): SseEvent | undefined => {
    const out = event || data.length ? { event: event || 'message', data: data.join('\n') } : undefined;
    event = '';
    data = [];
    return out;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A trailing lone CR may be the first half of a CRLF still on its way; wait for the next chunk.
      const lines = buffer.split(/\r\n|\r(?!$)|\n/);
      buffer = done ? '' : lines.pop()!;
      for (const line of lines) {
        if (line === '') {
          const complete = flush();
          if (complete) yield complete;
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = text;
          else if (field === 'data') data.push(text);
        }
      }
      if (done) break;
    }
    // A stream cut right after its last event's data still delivers that event.
    const last = flush();
    if (last) yield last;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
