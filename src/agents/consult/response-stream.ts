import { jsonrepair } from 'jsonrepair';
import type { AgentEvent, AgentEventSink } from '../../agent/loop/events.js';

/**
 * The consult answers in JSON decisions, and a patient must not watch JSON being typed. This reads each round's
 * text as it streams, repairs the partial JSON (the shared repair library closes an open string), and passes on
 * only the growth of the decision's `response` once its action is known to speak (respond, diagnose); rounds that
 * call a tool show nothing but their tool events. The reply the request returns stays the authority: the safety
 * check may put advice above it.
 */
export function responseStreamer(sink: AgentEventSink): AgentEventSink {
  const rounds = new Map<number, { raw: string; shown: number }>();
  return (event: AgentEvent) => {
    if (event.type !== 'text_delta') return sink(event);
    const round = rounds.get(event.round) ?? rounds.set(event.round, { raw: '', shown: 0 }).get(event.round)!;
    round.raw += event.text;
    const response = partialResponse(round.raw);
    if (response === undefined || response.length <= round.shown) return;
    sink({ ...event, text: response.slice(round.shown) });
    round.shown = response.length;
  };
}

function partialResponse(raw: string): string | undefined {
  const start = raw.indexOf('{');
  if (start < 0) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(jsonrepair(raw.slice(start)));
  } catch {
    return undefined;
  }
  const { action, response } = (data ?? {}) as { action?: unknown; response?: unknown };
  if ((action !== 'respond' && action !== 'diagnose') || typeof response !== 'string') return undefined;
  // A string cut inside an escape can repair to a shorter text than the one already shown; wait for more.
  return response;
}
