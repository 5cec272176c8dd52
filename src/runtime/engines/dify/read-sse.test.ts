import { describe, expect, it } from 'vitest';
import { readSse, type SseEvent } from './read-sse.js';

function bodyOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(chunks: string[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(bodyOf(chunks))) events.push(event);
  return events;
}

describe('readSse', () => {
  it('reads data events and bare ping lines as Dify writes them', async () => {
    expect(await all(['data: {"event":"message","answer":"a"}\n\n', 'event: ping\n\n', 'data: {"event":"message_end"}\n\n'])).toEqual([
      { event: 'message', data: '{"event":"message","answer":"a"}' },
      { event: 'ping', data: '' },
      { event: 'message', data: '{"event":"message_end"}' },
    ]);
  });

  it('joins events split anywhere across chunks, CRLF included, and skips comments', async () => {
    const text = ': keep-alive\r\ndata: {"answer":"大家好"}\r\n\r\nevent: ping\r\n\r\ndata: line one\ndata: line two\n\n';
    const bytes = new TextEncoder().encode(text);
    // One byte a chunk: every split there is, inside multi-byte characters and between CR and LF included.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(Uint8Array.of(byte));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const event of readSse(body)) events.push(event);
    expect(events).toEqual([
      { event: 'message', data: '{"answer":"大家好"}' },
      { event: 'ping', data: '' },
      { event: 'message', data: 'line one\nline two' },
    ]);
  });

  it('delivers a last event whose blank line never came (a cut stream)', async () => {
    expect(await all(['data: {"event":"message","answer":"half"}'])).toEqual([{ event: 'message', data: '{"event":"message","answer":"half"}' }]);
  });
});
