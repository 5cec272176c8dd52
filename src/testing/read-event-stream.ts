import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface ReceivedEvent {
  event: string;
  data: any;
  /** performance.now() when the event was parsed, for time-to-first-token figures. */
  receivedAt: number;
}

/**
 * Reads a fetch response of `text/event-stream` event by event, data parsed as JSON, the same way the console
 * does (eventsource-parser over fetch). Breaking out of the loop cancels the body, which closes the connection.
 */
export async function* readEventStream(response: Response): AsyncGenerator<ReceivedEvent> {
  if (!response.body) throw new Error('the response has no body');
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => queue.push(message) });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length) {
        const message = queue.shift()!;
        yield { event: message.event ?? 'message', data: JSON.parse(message.data), receivedAt: performance.now() };
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
