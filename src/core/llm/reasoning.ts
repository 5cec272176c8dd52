/**
 * Models that think aloud (Qwen3, DeepSeek-R1, QwQ) return their reasoning with the answer: inline as
 * `<think>...</think>` in the content, or in a separate `reasoning_content` (DeepSeek API, vLLM and SGLang
 * reasoning parsers) or `reasoning` (OpenRouter, newer vLLM) field of the message. The reasoning is worth
 * keeping in the trace, but it is not the answer: a verdict the model considered and dropped
 * (`<think>... {"passed": false}</think>{"passed": true}`) must never be parsed as the verdict, and a user
 * must never be shown half-formed thoughts as the reply. The gateway splits the two with `splitReasoning`.
 */
interface SplitContent {
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

/** Tags a streamed reply can open or close thinking with; `<thinking>` as some fine-tunes write it. */
const OPEN_TAGS = ['<think>', '<thinking>'];
const CLOSE_TAGS = ['</think>', '</thinking>'];

interface ThinkingFilter {
  /** Takes the next piece of raw content; returns the part that is answer and may be shown now ('' if none). */
  push(piece: string): string;
  /** The stream ended: returns what was held back because it might have been the start of a tag. */
  end(): string;
}

/**
 * `splitReasoning` for text that arrives in pieces. A tag can be cut anywhere (`<thi` + `nk>`), so a tail that
 * could still become a tag is held back until the next piece decides it; text inside a block is dropped (the
 * gateway still runs `splitReasoning` on the whole reply for the final content and the trace).
 * One case cannot be caught while streaming: a reply whose opening tag was in the prompt (a raw DeepSeek-R1
 * template) shows no tag until `</think>`; the text before it has been passed on by then. Servers with a
 * reasoning parser (vLLM, SGLang, Ollama, DashScope) send that thinking as `reasoning_content` instead, which
 * never reaches the filter, and the final content is split correctly either way.
 */
export function createThinkingFilter(): ThinkingFilter {
  let pending = '';
  let isThinking = false;
  // After a block the answer usually starts with a blank line, which splitReasoning trims; so does the stream,
  // until the first visible character.
  let sawThinking = false;
  let hasShownText = false;

  function find(text: string, tag: RegExp): { index: number; length: number } | undefined {
    const match = tag.exec(text);
    return match ? { index: match.index, length: match[0].length } : undefined;
  }

  /** Length of the longest tail of `text` that is a proper prefix of one of `tags` (at most 10 characters). */
  function partialTagTail(text: string, tags: string[]): number {
    for (let start = Math.max(0, text.length - 10); start < text.length; start++) {
      const tail = text.slice(start).toLowerCase();
      if (tags.some((tag) => tag.length > tail.length && tag.startsWith(tail))) return text.length - start;
    }
    return 0;
  }

  function visible(text: string): string {
    if (hasShownText || !sawThinking) {
      hasShownText ||= text.trim() !== '';
      return text;
    }
    const trimmed = text.trimStart();
    hasShownText = trimmed !== '';
    return trimmed;
  }

  return {
    push(piece) {
      pending += piece;
      let shown = '';
      for (;;) {
        if (isThinking) {
          const close = find(pending, CLOSE);
          if (!close) {
            // The thought itself is dropped; only a possible start of the closing tag is kept.
            pending = pending.slice(pending.length - partialTagTail(pending, CLOSE_TAGS));
            return shown;
          }
          pending = pending.slice(close.index + close.length);
          isThinking = false;
          continue;
        }
        const open = find(pending, OPEN);
        // A stray closing tag (the opening one was in the prompt) is never shown as text either.
        const close = find(pending, CLOSE);
        const next = open && (!close || open.index < close.index) ? open : close;
        if (!next) {
          const hold = partialTagTail(pending, [...OPEN_TAGS, ...CLOSE_TAGS]);
          shown += visible(pending.slice(0, pending.length - hold));
          pending = pending.slice(pending.length - hold);
          return shown;
        }
        shown += visible(pending.slice(0, next.index));
        pending = pending.slice(next.index + next.length);
        isThinking = next === open;
        sawThinking = true;
      }
    },
    end() {
      const rest = isThinking ? '' : visible(pending);
      pending = '';
      return rest;
    },
  };
}
