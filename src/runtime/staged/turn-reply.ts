import type { ChatMessage } from '../../core/llm/types.js';
import type { LoopOutcome } from '../loop/run-loop.js';

/**
 * The text the model wrote in this turn. The loop's messages begin with the prompt and the history; this turn's
 * rounds are what follows its user message, so an earlier turn's reply is never taken for this one's (a turn
 * stopped after failed tool calls has no text of its own).
 */
export function turnText(outcome: LoopOutcome<unknown>): string {
  if (outcome.kind === 'final' && outcome.content.trim()) return outcome.content;
  const messages: ChatMessage[] = outcome.messages;
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role !== 'user') start--;
  for (let i = messages.length - 1; i >= start; i--) {
    const message = messages[i]!;
    if (message.role === 'assistant' && typeof message.content === 'string' && message.content.trim()) return message.content;
  }
  return '';
}

/** What the user reads when the model wrote nothing: plainly that, why when the turn stopped, and what its tools left. */
export function noReplyMessage(outcome: LoopOutcome<unknown>, recorded: { tools: string[]; summary: string }): string {
  const why = outcome.kind === 'stopped' ? ` (the turn stopped: ${outcome.reason.replaceAll('_', ' ')})` : '';
  const kept = recorded.tools.length ? ` What ${recorded.tools.join(' and ')} computed is recorded: ${recorded.summary}.` : '';
  return `No answer was written for this message${why}.${kept} Send your message again for an explanation, perhaps in shorter parts.`;
}
