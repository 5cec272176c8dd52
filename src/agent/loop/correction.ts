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
