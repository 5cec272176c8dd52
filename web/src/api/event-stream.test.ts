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

  it('posts a FormData as multipart (fetch sets its boundary) and anything else as JSON', async () => {
    const sent: RequestInit[] = [];
    const post = createEventStream({
      getToken: () => 'token-1',
      onUnauthorized: () => {},
      fetch: async (_path, init) => {
        sent.push(init!);
        return new Response(sse(['result', { ok: true }]), { headers: { 'content-type': 'text/event-stream' } });
      },
    });
    const form = new FormData();
    form.append('message', 'hello');
    await post('/api/any/stream', form, { onEvent: () => {} });
    await post('/api/any/stream', { message: 'hello' }, { onEvent: () => {} });
    expect(sent[0]!.body).toBe(form);
    expect(sent[0]!.headers).not.toHaveProperty('content-type');
    expect(sent[1]!.body).toBe('{"message":"hello"}');
    expect(sent[1]!.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer token-1' });
  });
});
