import type OpenAI from 'openai';

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** A function the model may call; `parameters` is JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  model?: string;
  temperature?: number;
  maxTokens?: number;
  /** Ask the endpoint for a JSON object; not every endpoint honours it, so the parser stays tolerant. */
  jsonMode?: boolean;
  signal?: AbortSignal;
  /**
   * Stream the completion: each piece of text and of tool-call arguments is passed here as it arrives, and the
   * call still resolves to the whole ChatResponse (usage from the last chunk, or counted when the endpoint
   * sends none). Without it the call is a plain request.
   */
  onDelta?: (delta: ChatDelta) => void;
}

/** One streamed piece of a completion. Thinking (`<think>`, `reasoning_content`) is never passed as text. */
export type ChatDelta =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; index: number; id?: string; name?: string; argumentsDelta: string };

export interface ToolCallRequest {
  id: string;
  name: string;
  /** Raw JSON text as the model wrote it; parsed and validated by the tool registry. */
  arguments: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatResponse {
  /** The answer, with a thinking model's `<think>` blocks removed (core/llm/reasoning.ts). */
  content: string;
  /** What a thinking model reasoned before answering (`<think>` blocks, `reasoning_content`); '' otherwise. Trace only, never parsed or shown as the answer. */
  reasoning: string;
  toolCalls: ToolCallRequest[];
  modelName: string;
  finishReason: string;
  usage: TokenUsage;
  latencyMs: number;
}

export function imagePart(url: string, detail: 'auto' | 'low' | 'high' = 'auto'): ContentPart {
  return { type: 'image_url', image_url: { url, detail } };
}

export function textPart(text: string): ContentPart {
  return { type: 'text', text };
}
