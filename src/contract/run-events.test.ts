import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { AgentEvent } from '../runtime/loop/events.js';
import { AGENT_STREAM_DESCRIPTION, AgentStreamEvents } from './agent-stream.js';
import { CHAT_STREAM_DESCRIPTION, ChatStreamEvents } from './assistant-stream.js';
import { RUN_EVENT_NAMES, RunEvent, RunEvents, type RunEventName, type RunProgressEvent } from './run-events.js';

describe('the one run vocabulary', () => {
  it('gives both streaming routes the same events; only `result` differs', () => {
    for (const events of [AgentStreamEvents, ChatStreamEvents]) expect(Object.keys(events).sort()).toEqual([...RUN_EVENT_NAMES, 'result', 'error'].sort());
    const differing = (Object.keys(AgentStreamEvents) as Array<keyof typeof AgentStreamEvents>).filter((name) => AgentStreamEvents[name] !== ChatStreamEvents[name]);
    expect(differing).toEqual(['result']);
  });

  it('describes every event in each route\'s OpenAPI text, from the events\' own descriptions', () => {
    for (const text of [AGENT_STREAM_DESCRIPTION, CHAT_STREAM_DESCRIPTION]) {
      for (const name of RUN_EVENT_NAMES) expect(text).toContain(`\`${name}\` (${RunEvents[name].description})`);
      expect(text).toMatch(/exactly one `result` \(.+\) or `error`/);
    }
    expect(AGENT_STREAM_DESCRIPTION).toContain('AgentResult');
    expect(CHAT_STREAM_DESCRIPTION).toContain('ChatAnswer');
  });

  it('repeats each event\'s name as its `type`', () => {
    for (const name of RUN_EVENT_NAMES) expect(RunEvents[name].shape.type.value).toBe(name);
  });

  it('is the type the runtime emits: what the loop sends is what a client parses (checked by tsc)', () => {
    // tsc (npm run typecheck) fails here when the runtime's AgentEvent and the wire's events differ in any field.
    expectTypeOf<AgentEvent>().toEqualTypeOf<RunProgressEvent['data']>();
    expectTypeOf<AgentEvent>().toEqualTypeOf<z.input<typeof RunEvent>>();
    expectTypeOf<AgentEvent['type']>().toEqualTypeOf<RunEventName>();
    expect(RunEvent.options.map((schema) => schema.shape.type.value).sort()).toEqual([...RUN_EVENT_NAMES].sort());
  });

  it('parses any event by its `type`, and a planned part in any agent\'s words', () => {
    const plan = { type: 'plan', parts: [{ type: 'lookup', text: 'P003 ECOG' }], routedBy: 'model', routingFallback: null };
    expect(RunEvent.parse(plan)).toEqual(plan);
    expect(RunEvent.parse({ type: 'text_replaced', text: 'This answer was withheld.', reason: 'moderation' })).toMatchObject({ type: 'text_replaced' });
    expect(RunEvent.safeParse({ type: 'text_replaced' }).success).toBe(false);
  });
});
