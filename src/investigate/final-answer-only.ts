import type { AgentEvent, AgentEventSink } from '../runtime/loop/index.js';
import { MAX_ANSWER_CHARS } from './definition.js';

/**
 * Seed 000's "只返回 Final Answer" while streaming: a round's text is held back until the round ends, and is
 * forwarded only when that round asked for no tool call (`round_finished.toolCalls === 0`), i.e. it was the
 * answer. Text written before a tool call is the model thinking aloud; it stays in the trace, never reaches
 * the user. Tool events pass through at once, so a client can still show that the assistant is looking up data.
 * Nor is the text of an answer that will be asked again: one cut off by the token limit, or longer than an answer
 * may be (MAX_ANSWER_CHARS).
 */
export function finalAnswerOnly(sink: AgentEventSink): AgentEventSink {
  let held: Array<Extract<AgentEvent, { type: 'text_delta' }>> = [];
  return (event) => {
    if (event.type === 'text_delta') {
      held.push(event);
      return;
    }
    if (event.type === 'round_finished') {
      const text = held.filter((delta) => delta.round === event.round);
      held = [];
      const length = text.reduce((sum, delta) => sum + delta.text.length, 0);
      if (event.toolCalls === 0 && !event.truncated && length <= MAX_ANSWER_CHARS) for (const delta of text) sink(delta);
    }
    sink(event);
  };
}
