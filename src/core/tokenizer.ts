import { decode, encode } from 'gpt-tokenizer';

/**
 * Token counting for every budget in the platform (retrieved context, memory, ReAct scratchpads). It uses
 * the o200k_base BPE shipped in `gpt-tokenizer`: exact for OpenAI models and within a few percent for Qwen,
 * whose vocabulary is of the same family; budgets keep a margin for that.
 */
export function countTokens(text: string): number {
  return encode(text).length;
}

/** Cuts `text` to at most `maxTokens` tokens, on a token boundary. */
export function trimToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const tokens = encode(text);
  if (tokens.length <= maxTokens) return text;
  // A cut can fall inside a multi-byte character (CJK, emoji): the decoded prefix then ends in U+FFFD, is not
  // a prefix of the text and re-encodes to more tokens than the budget. Step back to a whole character.
  for (let n = maxTokens; n > 0; n--) {
    const prefix = decode(tokens.slice(0, n));
    if (text.startsWith(prefix) && countTokens(prefix) <= maxTokens) return prefix;
  }
  return '';
}

/** Keeps items in order while their running total stays within `maxTokens`; returns what fits. */
export function fitToBudget<T>(items: readonly T[], text: (item: T) => string, maxTokens: number): T[] {
  const kept: T[] = [];
  let used = 0;
  for (const item of items) {
    const cost = countTokens(text(item));
    if (used + cost > maxTokens) break;
    kept.push(item);
    used += cost;
  }
  return kept;
}
