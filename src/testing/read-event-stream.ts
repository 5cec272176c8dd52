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

/** POSTs `body` as JSON to a streaming route with the bearer `token` and reads every event until the stream ends. */
export async function postEventStream(url: string, token: string, body: unknown): Promise<ReceivedEvent[]> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
  const events: ReceivedEvent[] = [];
  for await (const event of readEventStream(response)) events.push(event);
  return events;
}

/** The text a person watched arrive: every `text_delta` of the events, joined. */
export function streamedText(events: readonly ReceivedEvent[]): string {
  return events.filter((e) => e.event === 'text_delta').map((e) => e.data.text as string).join('');
}
