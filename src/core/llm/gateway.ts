import OpenAI from 'openai';
import type { LlmConfig } from '../config.js';
import { ClinAgentError } from '../errors.js';
import { countTokens } from '../tokenizer.js';
import type { TraceScope } from '../trace/store.js';
import { cancelled, llmError, operatorDetailOf, toLlmError } from './errors.js';
import { DeltaSinkError, readCompletionStream } from './read-completion-stream.js';
import { splitReasoning } from './reasoning.js';
import type { ChatMessage, ChatRequest, ChatResponse } from './types.js';

export interface LlmGateway {
  readonly isConfigured: boolean;
  readonly modelName: string;
  /** Throws LLM_NOT_CONFIGURED, naming the variables to set, when the endpoint is not configured. */
  assertConfigured(): void;
  /**
   * One chat completion; streamed when `request.onDelta` is set, resolving to the same ChatResponse. Records an
   * `llm` span on `trace` when given, failed calls included. An aborted `request.signal` rejects with CANCELLED.
   */
  chat(request: ChatRequest, trace?: TraceScope): Promise<ChatResponse>;
}

/** Which required settings are absent, in the order a user should set them. */
export function missingLlmSettings(config: LlmConfig): string[] {
  const missing: string[] = [];
  if (!config.baseUrl) missing.push('LLM_BASE_URL');
  if (!config.model) missing.push('LLM_MODEL');
  return missing;
}

/**
 * The one LLM gateway. It wraps the official `openai` client and lets that client own timeouts and retries
 * (429 with retry-after, 408/409 and 5xx with exponential backoff), so there is a single retry policy.
 */
export function createLlmGateway(config: LlmConfig, options: { fetch?: typeof fetch } = {}): LlmGateway {
  const missing = missingLlmSettings(config);
  const client = missing.length
    ? undefined
    : new OpenAI({
        baseURL: config.baseUrl,
        // Local servers (vLLM, Ollama) accept any key; the client insists on one being present.
        apiKey: config.apiKey ?? 'not-needed',
        timeout: config.timeoutMs,
        maxRetries: config.maxRetries,
        fetch: options.fetch,
      });

  function assertConfigured(): void {
    if (!client) {
      throw new ClinAgentError(
        'LLM_NOT_CONFIGURED',
        `No LLM is configured: set ${missing.join(' and ')} (for example LLM_BASE_URL=https://dashscope.aliyuncs.com/compatible-mode/v1 and LLM_MODEL=qwen-plus, plus LLM_API_KEY if the endpoint needs one), then restart ClinAgent.`,
        { missing },
      );
    }
  }

  /** The request body both modes send; streaming adds only `stream` and `stream_options`. */
  function completionParams(request: ChatRequest) {
    return {
      model: request.model ?? config.model!,
      messages: request.messages,
      temperature: request.temperature,
      max_tokens: request.maxTokens,
      tools: request.tools?.length
        ? request.tools.map((tool) => ({ type: 'function' as const, function: { name: tool.name, description: tool.description, parameters: tool.parameters } }))
        : undefined,
      response_format: request.jsonMode ? { type: 'json_object' as const } : undefined,
    };
  }

  async function callModel(request: ChatRequest): Promise<ChatResponse> {
    assertConfigured();
    const started = performance.now();
    try {
      return request.onDelta ? await streamModel(client!, request, request.onDelta, started) : await completeModel(client!, request, started);
    } catch (error) {
      if (error instanceof DeltaSinkError) throw error.original;
      if (request.signal?.aborted) throw cancelled(error);
      throw toLlmError(error, { ...config, what: 'LLM' });
    }
  }

  async function completeModel(openai: OpenAI, request: ChatRequest, started: number): Promise<ChatResponse> {
    const completion = await openai.chat.completions.create(completionParams(request), { signal: request.signal });
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new Error('the response has no choices[0].message');
    const toolCalls = (choice.message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }] : [],
    );
    // Thinking models: the answer without its <think> blocks; the thinking goes to `reasoning` and the trace.
    const message = choice.message as typeof choice.message & { reasoning_content?: string | null; reasoning?: string | null };
    const { content, reasoning } = splitReasoning(message.content ?? '', message.reasoning_content ?? message.reasoning);
    return {
      content,
      reasoning,
      toolCalls,
      modelName: completion.model || request.model || config.model!,
      finishReason: choice.finish_reason ?? 'stop',
      usage: { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 },
      latencyMs: Math.round(performance.now() - started),
    };
  }

  /**
   * The client's timeout ends once the response headers arrive, so a stream that stalls half-way would hang
   * for ever: an idle timer of LLM_TIMEOUT_MS, reset by every chunk, aborts it instead. The `openai` stream ends
   * quietly (no error) when aborted, so what stopped it is read from the two signals afterwards.
   */
  async function streamModel(openai: OpenAI, request: ChatRequest, onDelta: NonNullable<ChatRequest['onDelta']>, started: number): Promise<ChatResponse> {
    const idle = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, idle.signal]) : idle.signal;
    const stream = await openai.chat.completions.create({ ...completionParams(request), stream: true, stream_options: { include_usage: true } }, { signal });
    let timer: NodeJS.Timeout | undefined;
    const armIdleTimer = () => {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), config.timeoutMs);
    };
    armIdleTimer();
    let assembled;
    try {
      assembled = await readCompletionStream(stream, onDelta, armIdleTimer);
    } finally {
      clearTimeout(timer);
    }
    if (request.signal?.aborted) throw cancelled();
    const details = { model: request.model ?? config.model };
    if (idle.signal.aborted) {
      throw llmError('LLM_TIMEOUT', 'The language model service stopped sending its answer part-way. Try again in a few minutes; if it keeps happening, tell your administrator.', `The LLM endpoint ${config.baseUrl} stopped sending its streamed answer for ${config.timeoutMs} ms. Raise LLM_TIMEOUT_MS or check that the endpoint is up and not overloaded.`, details);
    }
    if (assembled.finishReason === undefined) {
      throw llmError('LLM_BAD_RESPONSE', 'The language model service closed its answer before it was finished. Try again; if it keeps happening, tell your administrator.', `The LLM endpoint ${config.baseUrl} closed the stream before the answer was finished (no finish_reason). Check the server's logs or a proxy in between.`, details);
    }
    const { content, reasoning } = splitReasoning(assembled.rawContent, assembled.reasoningField || undefined);
    return {
      content,
      reasoning,
      toolCalls: assembled.toolCalls,
      modelName: assembled.modelName || request.model || config.model!,
      finishReason: assembled.finishReason,
      // Some OpenAI-compatible servers ignore stream_options; the budgets still need a figure, so count one.
      usage: assembled.usage ?? {
        promptTokens: estimatePromptTokens(request),
        completionTokens: countTokens(assembled.rawContent + assembled.reasoningField + assembled.toolCalls.map((call) => call.name + call.arguments).join('')),
      },
      latencyMs: Math.round(performance.now() - started),
    };
  }

  return {
    isConfigured: missing.length === 0,
    modelName: config.model ?? '',
    assertConfigured: () => assertConfigured(),
    async chat(request, trace) {
      if (!trace) return callModel(request);
      // A failed call is recorded with the operator's detail (endpoint, setting to change); users get the plain message.
      const outcome = await trace.span('llm', request.model ?? config.model ?? 'llm', { model: request.model ?? config.model, messages: summariseMessages(request.messages), tools: request.tools?.map((t) => t.name) }, () => callModel(request).then((response) => ({ response }), (error: unknown) => ({ error })), (result) => 'error' in result ? { status: 'failed', error: operatorDetailOf(result.error) } : {
        output: { content: clipLongText(result.response.content), ...(result.response.reasoning ? { reasoning: clipLongText(result.response.reasoning) } : {}), toolCalls: result.response.toolCalls, finishReason: result.response.finishReason, modelName: result.response.modelName },
        usage: result.response.usage,
      });
      if ('error' in outcome) throw outcome.error;
      return outcome.response;
    },
  };
}

/**
 * A model that ignores max_tokens can answer hundreds of kilobytes, and every later round would store it again and
 * send it back: the trace and a correction keep the start of such an answer and its length, enough to see what
 * went wrong.
 */
const LONG_TEXT_CHARS = 20_000;

export function clipLongText(text: string): string {
  return text.length > LONG_TEXT_CHARS ? `${text.slice(0, LONG_TEXT_CHARS)}... (${text.length} characters in all, cut here)` : text;
}

/** Image data URLs can be megabytes; the trace keeps their size, not their bytes. */
function summariseMessages(messages: ChatMessage[]): unknown[] {
  return messages.map((message) => {
    if (typeof message.content === 'string') return message.content.length > LONG_TEXT_CHARS ? { ...message, content: clipLongText(message.content) } : message;
    if (!Array.isArray(message.content)) return message;
    return {
      ...message,
      content: message.content.map((part) =>
        part.type === 'image_url' && part.image_url.url.startsWith('data:')
          ? { type: 'image_url', image_url: { url: `${part.image_url.url.slice(0, 30)}... (${part.image_url.url.length} chars)` } }
          : part,
      ),
    };
  });
}

/** Chat templates add a few tokens per message around its text; 4 is OpenAI's own rule of thumb. */
const TOKENS_PER_MESSAGE = 4;

/** Prompt size when the endpoint reports none: text parts and tool definitions counted, images not. */
function estimatePromptTokens(request: ChatRequest): number {
  let total = request.tools?.length ? countTokens(JSON.stringify(request.tools)) : 0;
  for (const message of request.messages) {
    total += TOKENS_PER_MESSAGE;
    const content = 'content' in message ? message.content : undefined;
    if (typeof content === 'string') total += countTokens(content);
    else if (Array.isArray(content)) for (const part of content) if (part.type === 'text') total += countTokens(part.text);
    if ('tool_calls' in message && message.tool_calls) total += countTokens(JSON.stringify(message.tool_calls));
  }
  return total;
}
