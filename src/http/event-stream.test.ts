import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { AgentEvent, AgentEventSink } from '../runtime/loop/index.js';
import { RUN_EVENT_NAMES, type RunEventName } from '../contract/index.js';
import { ClinAgentError } from '../core/errors.js';
import { streamRun } from './event-stream.js';

/** The one SSE helper on its own, over a real socket: what any streaming route sends when its work returns or throws. */
describe('streamRun', () => {
  const app = Fastify({ logger: false });
  let url: string;
  let work: (emit: AgentEventSink) => Promise<unknown>;

  beforeAll(async () => {
    app.post('/stream', async (request, reply) => streamRun(reply, request, (emit) => work(emit)));
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app.close();
  });

  async function received(): Promise<Array<{ event: string; data: any }>> {
    const response = await fetch(`${url}/stream`, { method: 'POST' });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    return text
      .split('\n\n')
      .filter((block) => block.startsWith('event:'))
      .map((block) => {
        const [eventLine, dataLine] = block.split('\n');
        return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) };
      });
  }

  it('sends what the agent loop emits under the names the contract documents (checked by the type check)', () => {
    expectTypeOf<AgentEvent['type']>().toEqualTypeOf<RunEventName>();
  });

  it('sends each event under its type, then the returned value as the one `result`', async () => {
    work = async (emit) => {
      emit({ type: 'run_started', traceId: 't1', runId: 'r1' });
      emit({ type: 'waiting', runId: 'r1', awaiting: 'answer', prompt: 'Which visit?' });
      return { answer: 'done' };
    };
    const events = await received();
    expect(events).toEqual([
      { event: 'run_started', data: { type: 'run_started', traceId: 't1', runId: 'r1' } },
      { event: 'waiting', data: { type: 'waiting', runId: 'r1', awaiting: 'answer', prompt: 'Which visit?' } },
      { event: 'result', data: { answer: 'done' } },
    ]);
    expect(events.slice(0, -1).every((e) => (RUN_EVENT_NAMES as string[]).includes(e.event))).toBe(true);
  });

  it('ends a failed run with one `error` event carrying the ClinAgentError as its JSON, and no result', async () => {
    work = async (emit) => {
      emit({ type: 'run_started', traceId: 't2' });
      throw new ClinAgentError('CONFLICT_STATE', 'The run is not waiting. Reload it.', { runId: 'r2' });
    };
    const events = await received();
    expect(events.map((e) => e.event)).toEqual(['run_started', 'error']);
    expect(events[1]!.data).toEqual({ code: 'CONFLICT_STATE', message: 'The run is not waiting. Reload it.', details: { runId: 'r2' } });
  });

  it('sends any other fault as INTERNAL with the request id, never its text', async () => {
    work = async () => {
      throw new Error('connection string postgres://secret@db');
    };
    const events = await received();
    expect(events.map((e) => e.event)).toEqual(['error']);
    expect(events[0]!.data).toMatchObject({ code: 'INTERNAL', details: { requestId: expect.any(String) } });
    expect(events[0]!.data.message).toContain(events[0]!.data.details.requestId);
    expect(JSON.stringify(events)).not.toContain('secret');
  });
});
