import type { ChatAnswer, ChatPart, Intent, IntentType, RunProgressEvent } from '../api';
import { waitingFor, type WaitingFor } from './chat-stream';

/** A tool the assistant called while answering one part; only its name is shown. */
export interface AssistantTool {
  callId: string;
  name: string;
  status: 'running' | 'ok' | 'failed';
}

/** One intent of the message as its answer arrives. */
export interface AssistantPartState {
  index: number;
  intent?: Intent;
  /** The final answer text of this part so far (text_delta never carries thoughts). */
  text: string;
  tools: AssistantTool[];
  /** Set by part_finished: how the part ended, with its whole answer. */
  part?: ChatPart;
}

/** What an assistant turn shows while it is answered; the final ChatAnswer replaces it. */
export interface AssistantStream {
  /** Known from the first event, so a stopped answer can still be looked up. */
  traceId?: string;
  /** The conversation this answer was added to; a stopped answer still continues it. */
  conversationId?: string;
  intents: Intent[];
  routedBy?: 'model' | 'rules';
  /** Why keyword rules classified the message: the model failed, or answered in a shape that could not be used. */
  routingFallback?: ChatAnswer['routingFallback'];
  parts: AssistantPartState[];
  /** The user pressed Stop: the text stays as far as it got. */
  isStopped: boolean;
  /** Set when the answer stopped for the user: what it asks of them. */
  waiting?: WaitingFor;
}

export const EMPTY_ASSISTANT_STREAM: AssistantStream = { intents: [], parts: [], isStopped: false };

function withPart(stream: AssistantStream, index: number, change: (part: AssistantPartState) => AssistantPartState): AssistantStream {
  const existing = stream.parts.find((part) => part.index === index);
  const parts = existing
    ? stream.parts.map((part) => (part.index === index ? change(part) : part))
    : [...stream.parts, change({ index, intent: stream.intents[index], text: '', tools: [] })].sort((a, b) => a.index - b.index);
  return { ...stream, parts };
}

/** Folds one server-sent event of POST .../chat/stream into what the turn shows; `part` is the intent's position. */
export function applyChatEvent(stream: AssistantStream, event: RunProgressEvent): AssistantStream {
  switch (event.event) {
    case 'run_started':
      return { ...stream, traceId: event.data.traceId, conversationId: event.data.conversationId };
    case 'plan':
      return { ...stream, intents: event.data.intents, routedBy: event.data.routedBy, routingFallback: event.data.routingFallback };
    case 'part_started':
      return withPart(stream, event.data.part, (part) => ({ ...part, intent: event.data.intent }));
    case 'tool_call_started': {
      const { part: index, callId, name } = event.data;
      return index === undefined ? stream : withPart(stream, index, (part) => ({ ...part, tools: [...part.tools, { callId, name, status: 'running' }] }));
    }
    case 'tool_call_finished': {
      const { part: index, callId, success } = event.data;
      return index === undefined ? stream : withPart(stream, index, (part) => ({ ...part, tools: part.tools.map((tool) => (tool.callId === callId ? { ...tool, status: success ? 'ok' : 'failed' } : tool)) }));
    }
    case 'text_delta': {
      const { part: index, text } = event.data;
      return index === undefined ? stream : withPart(stream, index, (part) => ({ ...part, text: part.text + text }));
    }
    case 'part_finished': {
      const { intent, answer, ok, ending } = event.data;
      return withPart(stream, event.data.part, (part) => ({ ...part, intent, part: { intent, answer, ok, ending } }));
    }
    case 'waiting':
      return { ...stream, waiting: waitingFor(event.data) };
    default:
      return stream;
  }
}

/** The answer as far as it has come: each part's text (its whole answer once finished), in order. */
export function streamText(stream: AssistantStream): string {
  return stream.parts
    .map((part) => (part.part ? part.part.answer : part.text))
    .filter((text) => text.trim() !== '')
    .join('\n\n');
}

/** The tools still running across the parts, for the progress line. */
export function runningTools(stream: AssistantStream): string[] {
  return stream.parts.flatMap((part) => part.tools.filter((tool) => tool.status === 'running').map((tool) => tool.name));
}

/** One badge per intent: what was asked, and how it was handled when that is not a plain answer. */
export interface IntentBadge {
  type: IntentType;
  /** Absent while the part is still being answered. */
  ending?: ChatPart['ending'];
  ok: boolean;
}

/** Badges of a finished answer: its parts in order, or the intents when no part ran. */
export function answerBadges(answer: Pick<ChatAnswer, 'intents' | 'parts'>): IntentBadge[] {
  if (answer.parts.length > 0) return answer.parts.map((part) => ({ type: part.intent.type, ending: part.ending, ok: part.ok }));
  return answer.intents.map((intent) => ({ type: intent.type, ok: true }));
}

/** Badges while the answer arrives: every intent the router found, with the ending of the parts done so far. */
export function streamBadges(stream: AssistantStream): IntentBadge[] {
  const count = Math.max(stream.intents.length, ...stream.parts.map((part) => part.index + 1));
  return Array.from({ length: count }, (_, index) => {
    const part = stream.parts.find((p) => p.index === index);
    const type = part?.part?.intent.type ?? part?.intent?.type ?? stream.intents[index]?.type ?? 'unclear';
    return part?.part ? { type, ending: part.part.ending, ok: part.part.ok } : { type, ok: true };
  });
}

/** How a badge reads its tone: a refused or limited part stands out. */
export function badgeTone(badge: IntentBadge): 'ok' | 'warn' | 'fail' | 'info' | 'neutral' {
  if (!badge.ending) return 'neutral';
  if (badge.ending === 'forbidden' || badge.ending === 'failed') return 'fail';
  if (!badge.ok) return 'warn';
  return badge.ending === 'answer' ? 'info' : 'ok';
}
