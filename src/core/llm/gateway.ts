import OpenAI from 'openai';
import type { LlmConfig } from '../config.js';
import { ClinAgentError } from '../errors.js';
import type { TraceScope } from '../trace/store.js';
import { toLlmError } from './errors.js';
import { splitReasoning } from './reasoning.js';
import type { ChatMessage, ChatRequest, ChatResponse } from './types.js';

export interface LlmGateway {
  readonly isConfigured: boolean;
  readonly modelName: string;
  /** Throws LLM_NOT_CONFIGURED, naming the variables to set, when the endpoint is not configured. */
  assertConfigured(): void;
  /** One chat completion. Records an `llm` span on `trace` when given, failed calls included. */
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

  async function callModel(request: ChatRequest): Promise<ChatResponse> {
    assertConfigured();
    const openai = client!;
    const started = performance.now();
    try {
      const completion = await openai.chat.completions.create(
        {
          model: request.model ?? config.model!,
          messages: request.messages,
          temperature: request.temperature,
          max_tokens: request.maxTokens,
          tools: request.tools?.length
            ? request.tools.map((tool) => ({ type: 'function' as const, function: { name: tool.name, description: tool.description, parameters: tool.parameters } }))
            : undefined,
          response_format: request.jsonMode ? { type: 'json_object' } : undefined,
        },
        { signal: request.signal },
      );
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
    } catch (error) {
      throw toLlmError(error, { ...config, what: 'LLM' });
    }
  }

  return {
    isConfigured: missing.length === 0,
    modelName: config.model ?? '',
    assertConfigured: () => assertConfigured(),
    async chat(request, trace) {
      if (!trace) return callModel(request);
      return trace.span('llm', request.model ?? config.model ?? 'llm', { model: request.model ?? config.model, messages: summariseMessages(request.messages), tools: request.tools?.map((t) => t.name) }, () => callModel(request), (response) => ({
        output: { content: response.content, ...(response.reasoning ? { reasoning: response.reasoning } : {}), toolCalls: response.toolCalls, finishReason: response.finishReason, modelName: response.modelName },
        usage: response.usage,
      }));
    },
  };
}

/** Image data URLs can be megabytes; the trace keeps their size, not their bytes. */
function summariseMessages(messages: ChatMessage[]): unknown[] {
  return messages.map((message) => {
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
