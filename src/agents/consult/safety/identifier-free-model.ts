import type { LlmGateway } from '../../../core/llm/gateway.js';
import type { ChatMessage, ChatResponse } from '../../../core/llm/types.js';
import type { TraceScope } from '../../../core/trace/store.js';
import { withIdentifierTextReplaced, withoutIdentifiersInModelText } from './identifiers.js';

/**
 * The consult's model, with identifiers taken out of what it answers before anything reads the answer. The model
 * may copy a name or phone number into its medical context, a tool call or its reply (a scripted or confused model
 * does, and a real one may make one up); the loop keeps its answer in the messages it sends back in the same turn,
 * records it in the step's trace, passes its tool calls to tools and their trace spans, and the consult stores it
 * as history. Cleaning the answer here, where it enters, keeps it out of all of them at once. The `llm` span the
 * gateway records keeps the cleaned answer too. One per turn: a value dropped from one answer (a name under
 * `patient_full_name`) is looked for in the turn's later answers as well.
 */
export function identifierFreeModel(llm: LlmGateway): LlmGateway {
  const known: string[] = [];
  const clean = (text: string) => withoutIdentifiersInModelText(text, known);
  const cleanResponse = (response: ChatResponse): ChatResponse => ({
    ...response,
    content: clean(response.content),
    reasoning: response.reasoning && clean(response.reasoning),
    toolCalls: response.toolCalls.map((call) => ({ ...call, arguments: clean(call.arguments) })),
  });
  return {
    get isConfigured() {
      return llm.isConfigured;
    },
    get modelName() {
      return llm.modelName;
    },
    assertConfigured: () => llm.assertConfigured(),
    chat: async (request, trace) => cleanResponse(await llm.chat(request, trace && identifierFreeTrace(trace, known))),
  };
}

/**
 * The gateway's trace with identifiers out of what its span records: the prompt as sent (its sources are cleaned
 * already; this is the guard for anything that was not) and the answer as the model wrote it.
 */
function identifierFreeTrace(trace: TraceScope, known: string[]): TraceScope {
  const cleanTexts = (value: unknown): unknown => {
    if (typeof value === 'string') return withoutIdentifiersInModelText(value, known);
    if (Array.isArray(value)) return value.map(cleanTexts);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, cleanTexts(inner)]));
  };
  return {
    traceId: trace.traceId,
    span: (kind, name, input, fn, describe) =>
      trace.span(kind, name, withIdentifierTextReplaced(input, known), fn, describe && ((result) => {
        const outcome = describe(result);
        return { ...outcome, output: cleanTexts(outcome.output) };
      })),
  };
}

/**
 * A consult's history as it goes back to the model, for consults saved before their answers were cleaned where they
 * enter: the model's messages (decisions, tool calls) and the patient's without identifiers.
 */
export function identifierFreeHistory(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message): ChatMessage => {
    if (message.role === 'assistant') {
      return {
        ...message,
        ...(typeof message.content === 'string' ? { content: withoutIdentifiersInModelText(message.content) } : {}),
        ...(message.tool_calls ? { tool_calls: message.tool_calls.map((call) => (call.type === 'function' ? { ...call, function: { ...call.function, arguments: withoutIdentifiersInModelText(call.function.arguments) } } : call)) } : {}),
      };
    }
    return withIdentifierTextReplaced(message) as ChatMessage;
  });
}
