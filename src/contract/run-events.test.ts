import { describe, expect, it } from 'vitest';
import { AGENT_STREAM_DESCRIPTION, AgentStreamEvents } from './agent-stream.js';
import { CHAT_STREAM_DESCRIPTION, ChatStreamEvents } from './assistant-stream.js';
import { RUN_EVENT_NAMES, RunEvents } from './run-events.js';

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
});
