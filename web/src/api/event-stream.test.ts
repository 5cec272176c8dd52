import { describe, expect, it } from 'vitest';
import { createEventStream, type RunProgressEvent } from './event-stream';

const sse = (...events: Array<[string, unknown]>) => events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');

function streamAnswering(body: string) {
  return createEventStream({
    getToken: () => 'token-1',
    onUnauthorized: () => {},
    fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
  });
}

/** The one client every console screen reads a stream with, whatever route it is. */
describe('createEventStream', () => {
  it('hands on the run events, skips names outside the vocabulary and resolves to the one result', async () => {
    const post = streamAnswering(
      sse(
        ['run_started', { type: 'run_started', traceId: 't1' }],
        ['intents', { type: 'intents', intents: [] }],
        ['waiting', { type: 'waiting', awaiting: 'answer', prompt: 'Which visit?' }],
        ['result', { answer: 'done' }],
      ),
    );
    const seen: RunProgressEvent[] = [];
    const result = await post<{ answer: string }>('/api/any/stream', {}, { onEvent: (event) => seen.push(event) });
    expect(result).toEqual({ answer: 'done' });
    expect(seen.map((e) => e.event)).toEqual(['run_started', 'waiting']);
  });

  it('rejects with the error event as an ApiError', async () => {
    const post = streamAnswering(sse(['run_started', { type: 'run_started', traceId: 't1' }], ['error', { code: 'INTERNAL', message: 'Internal error. Request id req-1.', details: { requestId: 'req-1' } }]));
    await expect(post('/api/any/stream', {}, { onEvent: () => {} })).rejects.toMatchObject({ code: 'INTERNAL', message: 'Internal error. Request id req-1.' });
  });
});
