import type { ChatAnswer } from '../api';
import type { StreamingAnswer } from './chat-stream';

/**
 * The trial assistant's reading of a streamed answer: one badge per intent. The stream itself is the one run
 * vocabulary folded by chat-stream.ts, where a planned part is a label and words; the labels are the assistant's
 * intents (ChatAnswer's `intents` types them once the result arrives), so a label the console does not know shows
 * as it is.
 */
export interface IntentBadge {
  type: string;
  /** How the part ended (ChatPart's ending); absent while it is still being answered. */
  ending?: string;
  ok: boolean;
}

/** Badges of a finished answer: its parts in order, or the intents when no part ran. */
export function answerBadges(answer: Pick<ChatAnswer, 'intents' | 'parts'>): IntentBadge[] {
  if (answer.parts.length > 0) return answer.parts.map((part) => ({ type: part.intent.type, ending: part.ending, ok: part.ok }));
  return answer.intents.map((intent) => ({ type: intent.type, ok: true }));
}

/** Badges while the answer arrives: every intent the router planned, with the ending of the parts done so far. */
export function streamBadges(stream: StreamingAnswer): IntentBadge[] {
  const planned = stream.plan?.parts ?? [];
  const count = Math.max(planned.length, ...stream.parts.map((part) => part.index + 1));
  return Array.from({ length: count }, (_, index) => {
    const part = stream.parts.find((p) => p.index === index);
    const type = part?.planned?.type ?? planned[index]?.type ?? 'unclear';
    return part?.finished ? { type, ending: part.finished.ending, ok: part.finished.ok } : { type, ok: true };
  });
}

/** How a badge reads its tone: a refused or limited part stands out. */
export function badgeTone(badge: IntentBadge): 'ok' | 'warn' | 'fail' | 'info' | 'neutral' {
  if (!badge.ending) return 'neutral';
  if (badge.ending === 'forbidden' || badge.ending === 'failed') return 'fail';
  if (!badge.ok) return 'warn';
  return badge.ending === 'answer' ? 'info' : 'ok';
}
