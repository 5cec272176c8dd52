import { z } from 'zod';
import { ChatPart, Intent, RoutingFallback } from './assistant.js';
import { ApiErrorBody } from './common.js';

/**
 * The events every streaming route sends (agent runs, the trial assistant, the agents to come), documented once:
 * the wire form of the agent loop's AgentEvent (src/agent/loop/events.ts, where the naming rule is). Each event is
 * `event: <name>` and one `data:` line of JSON repeating the name as `type`. Progress events come while the run
 * works, in any subset a run needs; then exactly one `result` (the route's own result body, the only part that
 * differs per route) or `error`, and the stream ends.
 */
export const RunEvents = {
  run_started: z
    .object({
      type: z.literal('run_started'),
      traceId: z.string().describe('the trace of this run, kept even if the run is stopped'),
      conversationId: z.string().optional().describe('the conversation this turn was added to'),
      runId: z.string().optional().describe('a durable run: its id, to look it up or resume it'),
    })
    .describe('the trace id (and conversation or run id): known before any work, so a stopped run can still be looked up'),
  plan: z
    .object({
      type: z.literal('plan'),
      intents: z.array(Intent).describe('the parts the run will answer, in order'),
      routedBy: z.enum(['model', 'rules']),
      routingFallback: RoutingFallback.nullable().describe('why keyword rules planned it; null when the model did'),
    })
    .describe('what the run will do, in order, and whether the model or keyword rules planned it'),
  part_started: z
    .object({ type: z.literal('part_started'), part: z.int().describe('position in the plan, from 0'), intent: Intent })
    .describe('one planned part begins; the events until its `part_finished` carry its `part`'),
  text_delta: z
    .object({ type: z.literal('text_delta'), round: z.int(), text: z.string().describe("a piece of the model's visible answer, never its thinking"), part: z.int().optional() })
    .describe('a piece of the answer as it is written'),
  tool_call_started: z
    .object({
      type: z.literal('tool_call_started'),
      round: z.int(),
      callId: z.string(),
      name: z.string(),
      arguments: z.string().optional().describe('JSON text as the model wrote it; absent where users see tool names only (the arguments stay in the trace)'),
      part: z.int().optional(),
    })
    .describe('a tool is about to run'),
  tool_call_finished: z
    .object({ type: z.literal('tool_call_finished'), round: z.int(), callId: z.string(), name: z.string(), success: z.boolean(), error: z.string().optional(), part: z.int().optional() })
    .describe('that tool has run, or was refused'),
  round_finished: z
    .object({ type: z.literal('round_finished'), round: z.int(), promptTokens: z.int(), completionTokens: z.int(), toolCalls: z.int().describe('tool calls the model asked for; they run next'), part: z.int().optional(), truncated: z.literal(true).optional().describe('the answer was cut off by the token limit: its text is not the answer, and the model is asked again') })
    .describe('one model call ended, with its tokens'),
  part_finished: z
    .object({ type: z.literal('part_finished'), part: z.int(), intent: Intent, answer: z.string(), ok: z.boolean(), ending: ChatPart.shape.ending })
    .describe('one planned part is done: its whole answer and how it ended'),
  waiting: z
    .object({
      type: z.literal('waiting'),
      runId: z.string().optional(),
      awaiting: z.enum(['answer', 'approval']).describe('what the run needs from a person'),
      prompt: z.string().describe('what to show them'),
    })
    .describe('the run stopped for a person ("waiting for you"): it goes on once they answer or decide'),
} as const;

export type RunEventName = keyof typeof RunEvents;
export const RUN_EVENT_NAMES = Object.keys(RunEvents) as RunEventName[];
/** One progress event as a client receives it: its name and its parsed data. */
export type RunProgressEvent = { [Name in RunEventName]: { event: Name; data: z.infer<(typeof RunEvents)[Name]> } }[RunEventName];

/** A streaming route's events: the shared progress events, its own `result`, and the usual `error` body. */
export function runStreamEvents<Result extends z.ZodType>(result: Result) {
  return {
    ...RunEvents,
    result,
    /** No result could be produced at all (a fault, or a refusal once the stream was open): the usual error body. */
    error: ApiErrorBody,
  } as const;
}

/** Every event a client may receive from a route whose `result` is `Result`. */
export type RunStreamEvent<Result> = RunProgressEvent | { event: 'result'; data: Result } | { event: 'error'; data: z.infer<typeof ApiErrorBody> };

/** The OpenAPI description of a streaming route's 200 response, written from the events' own descriptions. */
export function runStreamDescription(result: string): string {
  const progress = RUN_EVENT_NAMES.map((name) => `\`${name}\` (${RunEvents[name].description})`).join('; ');
  return `Server-sent events, each \`event: <name>\` with one \`data:\` line of JSON that repeats the name as \`type\`. While the run works, any of: ${progress}. Then exactly one \`result\` (${result}) or \`error\` ({code, message, details}), and the stream ends. Closing the connection stops the run; its trace is marked cancelled.`;
}
