import type OpenAI from 'openai';
import { createThinkingFilter } from './reasoning.js';
import type { ChatDelta, ToolCallRequest } from './types.js';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

/** A streamed completion put back together; the gateway turns it into the same ChatResponse as a plain call. */
interface AssembledCompletion {
  /** Every content piece joined, thinking tags included: `splitReasoning` makes the final content from it. */
  rawContent: string;
  /** `reasoning_content` / `reasoning` deltas joined (DeepSeek API, vLLM and SGLang reasoning parsers). */
  reasoningField: string;
  toolCalls: ToolCallRequest[];
  modelName: string;
  /** Undefined when the stream ended before any choice said why: the connection dropped mid-answer. */
  finishReason: string | undefined;
  /** From the last chunk that carried usage; undefined when the endpoint sent none. */
  usage: { promptTokens: number; completionTokens: number } | undefined;
}

/** Wraps an error thrown by the caller's onDelta, so the gateway rethrows it as it was instead of blaming the model. */
export class DeltaSinkError extends Error {
  constructor(readonly original: unknown) {
    super('onDelta threw', { cause: original });
  }
}

/**
 * Reads OpenAI-format chunks: passes visible text (thinking filtered out) and tool-call argument pieces to
 * `onDelta` as they come, and assembles the whole completion. `onChunk` runs for every chunk, so the gateway can
 * reset its idle timer.
 */
export async function readCompletionStream(chunks: AsyncIterable<Chunk>, onDelta: (delta: ChatDelta) => void, onChunk: () => void): Promise<AssembledCompletion> {
  const assembled: AssembledCompletion = { rawContent: '', reasoningField: '', toolCalls: [], modelName: '', finishReason: undefined, usage: undefined };
  const calls = new Map<number, ToolCallRequest>();
  const thinking = createThinkingFilter();
  const emit = (delta: ChatDelta) => {
    try {
      onDelta(delta);
    } catch (error) {
      throw new DeltaSinkError(error);
    }
  };

  for await (const chunk of chunks) {
    onChunk();
    if (chunk.model) assembled.modelName = chunk.model;
    if (chunk.usage) assembled.usage = { promptTokens: chunk.usage.prompt_tokens ?? 0, completionTokens: chunk.usage.completion_tokens ?? 0 };
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta as (typeof choice.delta & { reasoning_content?: string | null; reasoning?: string | null }) | undefined;
    const thought = delta?.reasoning_content ?? delta?.reasoning;
    if (thought) assembled.reasoningField += thought;
    if (delta?.content) {
      assembled.rawContent += delta.content;
      const text = thinking.push(delta.content);
      if (text) emit({ type: 'text', text });
    }
    for (const piece of delta?.tool_calls ?? []) {
      const call = calls.get(piece.index) ?? { id: '', name: '', arguments: '' };
      calls.set(piece.index, call);
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name += piece.function.name;
      const argumentsDelta = piece.function?.arguments ?? '';
      call.arguments += argumentsDelta;
      emit({ type: 'tool_call', index: piece.index, ...(piece.id ? { id: piece.id } : {}), ...(piece.function?.name ? { name: piece.function.name } : {}), argumentsDelta });
    }
    if (choice.finish_reason) assembled.finishReason = choice.finish_reason;
  }
  const rest = thinking.end();
  if (rest) emit({ type: 'text', text: rest });
  assembled.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  return assembled;
}
