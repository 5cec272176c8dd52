import { jsonrepair } from 'jsonrepair';
import { MAX_ANSWER_CHARS } from '../../runtime/loop/correction.js';
import type { AgentEvent, AgentEventSink } from '../../runtime/loop/events.js';
import type { PatientLanguage } from './patient-language.js';
import { LEAD_MARK, LEVEL_GUIDANCE, withoutContradictions } from './risk/level-guidance.js';
import type { RiskLevel } from './types.js';

/** The risk the patient's words show before the model answers: its advice is streamed first, as the reply leads with it. */
interface StreamGuidance {
  level: RiskLevel;
  language: PatientLanguage;
}

/**
 * The consult answers in JSON decisions, and a patient must not watch JSON being typed. This reads each round's
 * text as it streams, repairs the partial JSON (the shared repair library closes an open string), and passes on
 * only the growth of the decision's `response` once its action is known to speak (respond, diagnose); rounds that
 * call a tool show nothing but their tool events. The reply the request returns stays the authority: the safety
 * check may put advice above it. With `guidance`, the text streams as the reply will read: the level's advice
 * first, then the response a whole sentence at a time, without the sentences the advice contradicts (a patient
 * must not watch "no need to worry" appear under a warning, even if the result replaces it).
 */
export function responseStreamer(sink: AgentEventSink, guidance?: StreamGuidance): AgentEventSink {
  const rounds = new Map<number, { raw: string; shown: number }>();
  return (event: AgentEvent) => {
    if (event.type !== 'text_delta') return sink(event);
    const round = rounds.get(event.round) ?? rounds.set(event.round, { raw: '', shown: 0 }).get(event.round)!;
    round.raw += event.text;
    const response = partialResponse(round.raw);
    if (response === undefined) return;
    // Past what a reply may hold the answer will not be shown (consult-service.ts `showable`): stream no more of it.
    const visible = (guidance ? guided(response, guidance) : response).slice(0, MAX_ANSWER_CHARS);
    if (visible.length <= round.shown) return;
    sink({ ...event, text: visible.slice(round.shown) });
    round.shown = visible.length;
  };
}

/** What of a partial response may show under the level's advice: its complete sentences, the contradicting ones left out. */
function guided(response: string, { level, language }: StreamGuidance): string {
  const guidance = LEVEL_GUIDANCE[level];
  if (!guidance.leads) return response;
  // A sentence still being written cannot be judged yet; it shows once it ends.
  const complete = response.slice(0, lastSentenceEnd(response));
  const rest = withoutContradictions(complete, level);
  return `${LEAD_MARK} ${guidance.advice[language]}\n\n${rest}`;
}

function lastSentenceEnd(text: string): number {
  let end = 0;
  for (const match of text.matchAll(/[.!?。！？]+|\n/gu)) end = match.index + match[0].length;
  return end;
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
