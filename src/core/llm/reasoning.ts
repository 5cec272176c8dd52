/**
 * Models that think aloud (Qwen3, DeepSeek-R1, QwQ) return their reasoning with the answer: inline as
 * `<think>...</think>` in the content, or in a separate `reasoning_content` (DeepSeek API, vLLM and SGLang
 * reasoning parsers) or `reasoning` (OpenRouter, newer vLLM) field of the message. The reasoning is worth
 * keeping in the trace, but it is not the answer: a verdict the model considered and dropped
 * (`<think>... {"passed": false}</think>{"passed": true}`) must never be parsed as the verdict, and a user
 * must never be shown half-formed thoughts as the reply. The gateway splits the two with `splitReasoning`.
 */
export interface SplitContent {
  /** The answer with every thinking block removed, trimmed. */
  content: string;
  /** The thinking, blocks joined by a blank line; '' when the model did not think aloud. */
  reasoning: string;
}

const OPEN = /<think(?:ing)?>/i;
const BLOCK = /<think(?:ing)?>([\s\S]*?)<\/think(?:ing)?>/gi;
const CLOSE = /<\/think(?:ing)?>/i;

export function splitReasoning(rawContent: string, reasoningField?: string | null): SplitContent {
  const thoughts: string[] = [];
  if (reasoningField?.trim()) thoughts.push(reasoningField.trim());
  let content = rawContent;
  // DeepSeek-R1 chat templates put the opening tag in the prompt, so the output starts with the thinking and
  // only the closing tag appears: everything before a closing tag that has no opening tag is thinking.
  const close = CLOSE.exec(content);
  const open = OPEN.exec(content);
  if (close && (!open || close.index < open.index)) {
    thoughts.push(content.slice(0, close.index).trim());
    content = content.slice(close.index + close[0].length);
  }
  content = content.replace(BLOCK, (_block, thought: string) => {
    thoughts.push(thought.trim());
    return '';
  });
  // An opening tag that is never closed: the model was cut off (max_tokens) while still thinking. What
  // follows is unfinished thought, not an answer, and must not leak into it.
  const unclosed = OPEN.exec(content);
  if (unclosed) {
    thoughts.push(content.slice(unclosed.index + unclosed[0].length).trim());
    content = content.slice(0, unclosed.index);
  }
  const hadThinking = thoughts.length > 0 || content !== rawContent;
  return { content: hadThinking ? content.trim() : rawContent, reasoning: thoughts.filter(Boolean).join('\n\n') };
}
