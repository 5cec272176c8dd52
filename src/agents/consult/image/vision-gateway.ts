import type { Config } from '../../../core/config.js';
import { createLlmGateway } from '../../../core/llm/gateway.js';
import type { VisionModel } from './analyze-image.js';

/**
 * The vision model as the settings describe it (VISION_MODEL, VISION_BASE_URL, VISION_API_KEY; config.vision
 * already falls back to the LLM endpoint and key), on the one gateway with the LLM's timeout and retry policy.
 * Undefined when VISION_MODEL is absent: the consult then runs without image analysis. The caller registers
 * config.vision.apiKey with the secret registry, as it does the LLM key.
 */
export function createVisionGateway(config: Pick<Config, 'vision' | 'llm'>, options: { fetch?: typeof fetch } = {}): VisionModel | undefined {
  const { model, baseUrl, apiKey } = config.vision;
  if (!model) return undefined;
  const gateway = createLlmGateway({ model, baseUrl, apiKey, timeoutMs: config.llm.timeoutMs, maxRetries: config.llm.maxRetries }, options);
  return { gateway, model };
}
