import type { ChatMessage } from '../../core/llm/types.js';

/**
 * The one message that sends an unusable answer back to the model: one `path: message` line per problem (a model
 * fixes a named field, not "invalid output"), then the shape to answer with when the agent has one. Every agent
 * that validates its answers corrects with this text, so a prompt fix for one helps them all.
 */
export function correctionMessage(problems: readonly string[], shape?: string): ChatMessage {
  const ask = shape ? `Reply with the corrected JSON object only: ${shape}.` : 'Reply with the corrected JSON object only.';
  return { role: 'user', content: `Your answer could not be used:\n${problems.join('\n')}\n${ask}` };
}

/** The same for an agent that answers in prose: the problems, then a request for the whole answer again. */
export function textCorrectionMessage(problems: readonly string[]): ChatMessage {
  return { role: 'user', content: `Your answer could not be used:\n${problems.join('\n')}\nReply with your whole answer again.` };
}

/**
 * What a person is shown of one answer at most: a model that ignores max_tokens can send 200 kB, which no one reads
 * and which would be stored and sent back as history. An agent refuses a longer answer as unusable (asked again).
 */
export const MAX_ANSWER_CHARS = 16_000;

/** The problem with an answer a person cannot be shown (empty, or longer than MAX_ANSWER_CHARS), if any. */
export function unshowableAnswer(answer: string, maxChars = MAX_ANSWER_CHARS): string | undefined {
  if (!answer.trim()) return '(root): the answer is empty; answer the question';
  if (answer.length > maxChars) return `(root): the answer is ${answer.length} characters, longer than can be shown (at most ${maxChars}); answer again, shorter`;
  return undefined;
}
