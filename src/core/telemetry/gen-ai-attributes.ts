import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_OPERATION_NAME_VALUE_RETRIEVAL,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from '@opentelemetry/semantic-conventions/incubating';
import { isUuid } from '../ids.js';
import type { SpanKind, SpanOutcome } from '../trace/store.js';

/**
 * How a run and its steps, as the trace store records them, read in the OpenTelemetry GenAI semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ and gen-ai-agent-spans/): a run is
 * `invoke_agent <agent>`, a model call (kind llm, recorded by core/llm/gateway.ts) `chat <model>`, a tool call (kind
 * tool, core/tools/registry.ts) `execute_tool <tool>`, a retrieval `retrieval <name>`, any other step an internal span
 * named as the step. Attributes without a convention are `clinagent.*`.
 *
 * Content (prompts, answers, tool arguments and results, run inputs and outputs, error texts) is added only through
 * `content`, which is undefined unless capture was opted into (otel-export.ts): without it these functions see the
 * values only to read model names, finish reasons and token counts.
 */

/**
 * The gateway speaks the OpenAI chat-completions API to whatever endpoint LLM_BASE_URL names (OpenAI, vLLM, Ollama,
 * DashScope...): `openai` is the API the spans describe, the endpoint stays in ClinAgent's configuration.
 */
const PROVIDER = GEN_AI_PROVIDER_NAME_VALUE_OPENAI;

/** Turns a value into the text of a content attribute: identifiers and secrets removed, length bounded. */
export type ContentText = (value: unknown) => string;

export interface SpanShape {
  name: string;
  attributes: Attributes;
}

export function runSpan(run: { kind: string; name: string; input: unknown }, content: ContentText | undefined): SpanShape {
  // A conversation's turns are runs of their own: its id (a UUID, never content) ties them together in the receiver.
  const conversationId = asObject(run.input)?.conversationId;
  return {
    name: `${GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT} ${run.name}`,
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_PROVIDER_NAME]: PROVIDER,
      // The registry's agent id (a scenario, an internal agent) or what the run names itself (an SOP skill on a record).
      [ATTR_GEN_AI_AGENT_ID]: run.name,
      [ATTR_GEN_AI_AGENT_NAME]: run.name,
      'clinagent.trace.kind': run.kind,
      ...(typeof conversationId === 'string' && isUuid(conversationId) ? { [ATTR_GEN_AI_CONVERSATION_ID]: conversationId } : {}),
      ...(content && run.input !== undefined ? { 'clinagent.run.input': content(run.input) } : {}),
    },
  };
}

export function runEndAttributes(end: { status: string; output?: unknown; promptTokens: number; completionTokens: number }, content: ContentText | undefined): Attributes {
  return {
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: end.promptTokens,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: end.completionTokens,
    'clinagent.run.status': end.status,
    ...(content && end.output !== undefined ? { 'clinagent.run.output': content(end.output) } : {}),
  };
}

export function stepSpan(kind: SpanKind, name: string, input: unknown, content: ContentText | undefined): SpanShape {
  const object = asObject(input);
  switch (kind) {
    case 'llm': {
      const model = typeof object?.model === 'string' ? object.model : name;
      return {
        name: `${GEN_AI_OPERATION_NAME_VALUE_CHAT} ${model}`,
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
          [ATTR_GEN_AI_PROVIDER_NAME]: PROVIDER,
          [ATTR_GEN_AI_REQUEST_MODEL]: model,
          ...(content && object?.messages !== undefined ? { [ATTR_GEN_AI_INPUT_MESSAGES]: content(object.messages) } : {}),
        },
      };
    }
    case 'tool':
      return {
        name: `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${name}`,
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
          [ATTR_GEN_AI_TOOL_NAME]: name,
          [ATTR_GEN_AI_TOOL_TYPE]: 'function',
          ...(content && object && 'arguments' in object ? { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: content(object.arguments) } : {}),
        },
      };
    case 'retrieval':
      return {
        name: `${GEN_AI_OPERATION_NAME_VALUE_RETRIEVAL} ${name}`,
        attributes: { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_RETRIEVAL, 'clinagent.step.name': name, ...(content ? { 'clinagent.step.input': content(input) } : {}) },
      };
    default:
      return { name, attributes: { 'clinagent.step.name': name, ...(content ? { 'clinagent.step.input': content(input) } : {}) } };
  }
}

export function stepEndAttributes(kind: SpanKind, outcome: SpanOutcome, content: ContentText | undefined): Attributes {
  const usage = outcome.usage ? { [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: outcome.usage.promptTokens, [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: outcome.usage.completionTokens } : {};
  const output = asObject(outcome.output);
  switch (kind) {
    case 'llm':
      return {
        ...usage,
        ...(typeof output?.modelName === 'string' && output.modelName ? { [ATTR_GEN_AI_RESPONSE_MODEL]: output.modelName } : {}),
        ...(typeof output?.finishReason === 'string' ? { [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [output.finishReason] } : {}),
        ...(content && output ? { [ATTR_GEN_AI_OUTPUT_MESSAGES]: content([{ role: 'assistant', content: output.content, toolCalls: output.toolCalls }]) } : {}),
      };
    case 'tool':
      return content && outcome.output !== undefined ? { [ATTR_GEN_AI_TOOL_CALL_RESULT]: content(outcome.output) } : {};
    default:
      return { ...usage, ...(content && outcome.output !== undefined ? { 'clinagent.step.output': content(outcome.output) } : {}) };
  }
}

/**
 * `error.type` is meant to be low-cardinality: our error code (LLM_TIMEOUT, NOT_FOUND...) or the class name of what
 * was thrown, else what kind of step failed. Never the message, which may quote what was said.
 */
export function errorType(kind: SpanKind | 'run', thrown: unknown): string {
  const code = asObject(thrown)?.code;
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,63}$/.test(code)) return code;
  if (thrown instanceof Error && thrown.name && thrown.name !== 'Error') return thrown.name;
  return { llm: 'llm_call_failed', tool: 'tool_call_failed', retrieval: 'retrieval_failed', step: 'step_failed', run: 'run_failed' }[kind];
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
