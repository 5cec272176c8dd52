import { describe, expect, it } from 'vitest';
import type { RunProgressEvent } from '../api';
import { createConversationStream, streamConversationOf, type StreamCall } from './conversation-stream';

interface Reply {
  answer: string;
}

/** A streaming call that sends `events`, then waits until the test settles it (or the page stops it). */
function heldCall(events: RunProgressEvent[]) {
  let settle!: { resolve(reply: Reply): void; reject(error: unknown): void };
  const call: StreamCall<Reply> = ({ signal, onEvent }) =>
    new Promise<Reply>((resolve, reject) => {
      settle = { resolve, reject };
      signal.addEventListener('abort', () => reject(new DOMException('The user aborted a request.', 'AbortError')));
      for (const event of events) onEvent(event);
    });
  return { call, settle: () => settle };
}

const started: RunProgressEvent = { event: 'run_started', data: { type: 'run_started', traceId: 't1', conversationId: 'c1' } };
const tool: RunProgressEvent = { event: 'tool_call_started', data: { type: 'tool_call_started', round: 0, callId: 'k1', name: 'search_guidelines' } };
const text: RunProgressEvent = { event: 'text_delta', data: { type: 'text_delta', round: 1, text: 'See a dermatologist.' } };

describe('createConversationStream', () => {
  it('folds the run events into the turn, then keeps the result beside them', async () => {
    const store = createConversationStream<Reply, { imageUrl: string | null }>();
    const held = heldCall([started, tool, text]);
    const sent = store.getState().send('consult-1', { input: '  a red patch  ', imageUrl: 'blob:1' }, held.call);
    const running = streamConversationOf(store.getState(), 'consult-1');
    expect(running.isRunning).toBe(true);
    expect(running.turns[0]).toMatchObject({ input: 'a red patch', imageUrl: 'blob:1', streaming: { text: 'See a dermatologist.', traceId: 't1', tools: [{ name: 'search_guidelines', status: 'running' }] } });

    held.settle().resolve({ answer: 'See a dermatologist soon.' });
    expect(await sent).toMatchObject({ status: 'answered', result: { answer: 'See a dermatologist soon.' }, streaming: { conversationId: 'c1' } });
    const done = streamConversationOf(store.getState(), 'consult-1');
    expect(done.isRunning).toBe(false);
    expect(done.turns[0]?.result).toEqual({ answer: 'See a dermatologist soon.' });
  });

  it('sends one message at a time per scope, and any number across scopes', async () => {
    const store = createConversationStream<Reply>();
    const first = heldCall([started]);
    const sent = store.getState().send('a', { input: 'one' }, first.call);
    expect(await store.getState().send('a', { input: 'two' }, heldCall([]).call)).toEqual({ status: 'refused' });
    expect(await store.getState().send('a', { input: '   ' }, heldCall([]).call)).toEqual({ status: 'refused' });
    const other = heldCall([]);
    const otherSent = store.getState().send('b', { input: 'elsewhere' }, other.call);
    first.settle().resolve({ answer: '1' });
    other.settle().resolve({ answer: '2' });
    await Promise.all([sent, otherSent]);
    expect(streamConversationOf(store.getState(), 'a').turns.map((t) => t.input)).toEqual(['one']);
    expect(streamConversationOf(store.getState(), 'b').turns.map((t) => t.input)).toEqual(['elsewhere']);
  });

  it('keeps the text of a stopped answer, marked stopped; a failed request keeps its error', async () => {
    const store = createConversationStream<Reply>();
    const held = heldCall([started, text]);
    const sent = store.getState().send('p', { input: 'draft the objectives' }, held.call);
    store.getState().stop('p');
    expect(await sent).toMatchObject({ status: 'stopped', streaming: { text: 'See a dermatologist.', isStopped: true } });

    const failing = heldCall([]);
    const failed = store.getState().send('p', { input: 'again' }, failing.call);
    const error = new Error('HTTP 500');
    failing.settle().reject(error);
    expect(await failed).toEqual({ status: 'failed', error });
    expect(streamConversationOf(store.getState(), 'p').turns.map((t) => [t.streaming.isStopped, t.requestError])).toEqual([
      [true, undefined],
      [false, error],
    ]);
  });

  it('drops what a cleared scope was still answering: a late result does not bring its turn back', async () => {
    const store = createConversationStream<Reply>();
    const held = heldCall([started]);
    const sent = store.getState().send('s', { input: 'question' }, held.call);
    store.getState().clear('s');
    expect(await sent).toMatchObject({ status: 'stopped' });
    expect(streamConversationOf(store.getState(), 's')).toEqual({ turns: [], isRunning: false });
    // The scope is free at once for the next message.
    const next = heldCall([]);
    const nextSent = store.getState().send('s', { input: 'next' }, next.call);
    expect(streamConversationOf(store.getState(), 's').isRunning).toBe(true);
    next.settle().resolve({ answer: 'ok' });
    await nextSent;
    expect(streamConversationOf(store.getState(), 's').turns.map((t) => t.result)).toEqual([{ answer: 'ok' }]);
  });
});
