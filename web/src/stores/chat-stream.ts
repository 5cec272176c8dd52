import type { RunProgressEvent } from '../api';

/** What a run that stopped for a person asks of them (the `waiting` event). */
export type WaitingFor = Omit<Extract<RunProgressEvent, { event: 'waiting' }>['data'], 'type'>;

/** One planned part of a run (the `plan` event): its kind in the agent's own words, and what it is about. */
export type PlannedPart = Extract<RunProgressEvent, { event: 'plan' }>['data']['parts'][number];

/** A tool call of a streamed turn, from the moment the model asks for it. */
export interface StreamingTool {
  callId: string;
  name: string;
  status: 'running' | 'ok' | 'failed';
  error?: string;
  /** The planned part it belongs to, in a run of parts. */
  part?: number;
}

/** One planned part of a run as its answer arrives (the trial assistant: one intent of the message). */
export interface StreamingPart {
  index: number;
  planned?: PlannedPart;
  /** This part's visible text so far. */
  text: string;
  /** Set by part_finished: its whole answer and how it ended, in its agent's words. */
  finished?: { answer: string; ok: boolean; ending: string };
}

/**
 * What a turn shows while its answer arrives, for every chat page (agent runs, the trial assistant, the consult,
 * the Protocol Agent): folded from the one run vocabulary by applyStreamEvent; the final result replaces it.
 */
export interface StreamingAnswer {
  /** The model's visible text so far, rounds and parts separated by a blank line; the replacement after text_replaced. */
  text: string;
  /** The round (and part) the last text came from, so a new one starts a new paragraph. */
  lastRound: number;
  lastPart?: number;
  /** Every tool call so far, in order, kept once finished: the pages show what the answer used. */
  tools: StreamingTool[];
  /** The user pressed Stop: the text stays as far as it got. */
  isStopped: boolean;
  /** The run's trace, known from its first event, so a stopped run can still be looked up. */
  traceId?: string;
  /** The conversation the turn was added to (a stopped turn still continues it). */
  conversationId?: string;
  /** What the run planned to answer, in order, and whether the model or keyword rules planned it. */
  plan?: Omit<Extract<RunProgressEvent, { event: 'plan' }>['data'], 'type'>;
  /** The planned parts begun so far, in plan order. */
  parts: StreamingPart[];
  /** Set when the run stopped for the user: what it asks of them. */
  waiting?: WaitingFor;
  /** The answer written so far was replaced (moderation): `text` is the replacement, shown instead of the parts. */
  replaced?: { reason?: string };
}

export const EMPTY_STREAM: StreamingAnswer = { text: '', lastRound: -1, tools: [], isStopped: false, parts: [] };

function withPart(answer: StreamingAnswer, index: number, change: (part: StreamingPart) => StreamingPart): StreamingAnswer {
  const existing = answer.parts.find((part) => part.index === index);
  const parts = existing
    ? answer.parts.map((part) => (part.index === index ? change(part) : part))
    : [...answer.parts, change({ index, planned: answer.plan?.parts[index], text: '' })].sort((a, b) => a.index - b.index);
  return { ...answer, parts };
}

/** Folds one event of the run vocabulary (src/contract/run-events.ts) into what the turn shows. */
export function applyStreamEvent(answer: StreamingAnswer, event: RunProgressEvent): StreamingAnswer {
  switch (event.event) {
    case 'run_started':
      return { ...answer, traceId: event.data.traceId, ...(event.data.conversationId ? { conversationId: event.data.conversationId } : {}) };
    case 'plan':
      return { ...answer, plan: { parts: event.data.parts, routedBy: event.data.routedBy, routingFallback: event.data.routingFallback } };
    case 'part_started':
      return withPart(answer, event.data.part, (part) => ({ ...part, planned: event.data.planned }));
    case 'text_delta': {
      const { round, part, text } = event.data;
      const isNewParagraph = answer.text !== '' && (round !== answer.lastRound || part !== answer.lastPart);
      const next = { ...answer, text: answer.text + (isNewParagraph ? '\n\n' : '') + text, lastRound: round, lastPart: part };
      return part === undefined ? next : withPart(next, part, (p) => ({ ...p, text: p.text + text }));
    }
    case 'tool_call_started': {
      const { callId, name, part } = event.data;
      return { ...answer, tools: [...answer.tools, { callId, name, status: 'running', ...(part === undefined ? {} : { part }) }] };
    }
    case 'tool_call_finished':
      return {
        ...answer,
        tools: answer.tools.map((tool) =>
          tool.callId === event.data.callId ? { ...tool, status: event.data.success ? 'ok' : 'failed', ...(event.data.error ? { error: event.data.error } : {}) } : tool,
        ),
      };
    case 'part_finished': {
      const { planned, answer: text, ok, ending } = event.data;
      return withPart(answer, event.data.part, (part) => ({ ...part, planned, finished: { answer: text, ok, ending } }));
    }
    case 'waiting':
      return { ...answer, waiting: waitingFor(event.data) };
    case 'text_replaced':
      // Whatever was written is no longer the answer (a moderation rule changed it): only the replacement shows.
      return { ...answer, text: event.data.text, replaced: event.data.reason ? { reason: event.data.reason } : {} };
    default:
      return answer;
  }
}

/**
 * The answer as far as it has come: in a run of parts each part's text (its whole answer once finished), in plan
 * order; otherwise the text. A replaced answer shows only its replacement.
 */
export function shownText(answer: StreamingAnswer): string {
  if (answer.replaced || answer.parts.length === 0) return answer.text;
  return answer.parts
    .map((part) => (part.finished ? part.finished.answer : part.text))
    .filter((text) => text.trim() !== '')
    .join('\n\n');
}

/** The names of the tools still running, once each, for a progress line. */
export function runningTools(answer: StreamingAnswer): string[] {
  return [...new Set(answer.tools.filter((tool) => tool.status === 'running').map((tool) => tool.name))];
}

export function waitingFor({ runId, awaiting, prompt }: Extract<RunProgressEvent, { event: 'waiting' }>['data']): WaitingFor {
  return runId ? { runId, awaiting, prompt } : { awaiting, prompt };
}

const STRUCTURED_START = /^\s*(?:```|\{|\[)/;

/**
 * Structured scenarios answer in JSON, which is hard to read while it arrives. When the text so far is a JSON
 * object with the answer field of a built-in output type (`answer` of qa_answer, `summary` of
 * data_check_report), show that string as far as it has come; other JSON not at all; plain text as it is. The final
 * result replaces the preview either way.
 */
export function previewText(text: string): string {
  const start = /^\s*(?:```(?:json)?\s*)?\{[\s\S]*?"(?:answer|summary)"\s*:\s*"/.exec(text);
  // JSON without its answer string (the key not yet arrived, or a model answer of the wrong shape) is not for a
  // person to read: nothing shows until the answer does, or the result replaces the preview.
  if (!start) return STRUCTURED_START.test(text) ? '' : text;
  let preview = '';
  for (let i = start[0].length; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') return preview;
    if (char !== '\\') {
      preview += char;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) return preview; // the escape's second half has not arrived yet
    if (next === 'u') {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) return preview;
      preview += String.fromCharCode(parseInt(hex, 16));
      i += 5;
      continue;
    }
    preview += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[next] ?? next;
    i++;
  }
  return preview;
}
