import { createRequire } from 'node:module';
import { OpenAIProvider, setTracingDisabled, type OpenAIClient } from '@openai/agents';
import type { LlmConfig } from '../../../core/config.js';

/**
 * The SDK's own `openai` (7, nested under @openai/agents-openai; the gateway stays on 6). Loaded from the SDK's
 * folder so the client is the one the SDK was built against, and made here rather than by OpenAIProvider so that
 * LLM_TIMEOUT_MS and LLM_MAX_RETRIES hold for it as for the gateway (the provider's own client would wait 10 min).
 */
const sdkRequire = createRequire(import.meta.resolve('@openai/agents-openai'));
export const SdkOpenAI = sdkRequire('openai') as SdkOpenAIModule;

type ErrorClass<Extra = object> = abstract new (...args: never[]) => Error & Extra;

/** What is used of openai 7 here: the client, and the error classes its calls throw. */
interface SdkOpenAIModule {
  default: new (options: { baseURL?: string; apiKey: string; timeout: number; maxRetries: number; fetch?: typeof fetch }) => OpenAIClient;
  APIError: ErrorClass<{ status: number | undefined; error: unknown; headers: Headers | undefined }>;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

let tracingOff = false;

/**
 * The model provider of one run: the gateway's OpenAI-compatible endpoint (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY) on
 * the chat-completions API, as every OpenAI-compatible server has it (the Responses API is OpenAI's own). The SDK's
 * tracing is off: it would send each run to OpenAI's trace endpoint; the run is traced in our trace store instead.
 * `finishReasons` gets each completion's finish reason in order: the SDK keeps none for an answer with text, and an
 * answer cut off at the token limit ("length") must not pass for a whole one.
 */
export function sdkModelProvider(llm: LlmConfig, finishReasons: string[] = []): OpenAIProvider {
  if (!tracingOff) {
    setTracingDisabled(true);
    tracingOff = true;
  }
  const OpenAI = SdkOpenAI.default;
  const noting: typeof fetch = async (url, init) => {
    const response = await fetch(url, init);
    if (response.ok && response.headers.get('content-type')?.includes('application/json')) {
      const body = (await response.clone().json().catch(() => undefined)) as { choices?: Array<{ finish_reason?: string | null }> } | undefined;
      finishReasons.push(body?.choices?.[0]?.finish_reason ?? '');
    }
    return response;
  };
  // Local servers (vLLM, Ollama) accept any key; the client insists on one being present (as in the gateway).
  const client = new OpenAI({ baseURL: llm.baseUrl, apiKey: llm.apiKey ?? 'not-needed', timeout: llm.timeoutMs, maxRetries: llm.maxRetries, fetch: noting });
  return new OpenAIProvider({ openAIClient: client, useResponses: false });
}
