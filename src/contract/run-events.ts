import { z } from 'zod';
import { ApiErrorBody } from './common.js';

/**
 * What a run reports while it works: the one event vocabulary of every agent (runAgent, the trial assistant, the
 * durable agents, the Dify engine), made from the same items the trace stores. These schemas are the only
 * declaration: the agent loop's AgentEvent (src/runtime/loop/events.ts) is inferred from them, so what the runtime
 * emits and what a client is told it receives cannot drift apart. A client renders text as it comes and tools as
 * they happen. Each event is `event: <name>` and one `data:` line of JSON repeating the name as `type`. Progress
 * events come while the run works, in any subset a run needs; then exactly one `result` (the route's own result
 * body, the only part that differs per route) or `error`, and the stream ends.
 *
 * How names are chosen, so the next agent adds none for a thing that already has one:
 * - something with a duration is a pair `<thing>_started` / `<thing>_finished` (run, part, tool call; a round ends
 *   with `round_finished` alone, as its start says nothing a client needs);
 * - a single fact is a bare noun, `<thing>_delta` for a piece of a larger whole, or `<thing>_<past participle>` for
 *   something that happened to a thing already sent (`plan`, `waiting`, `text_delta`, `text_replaced`);
 * - positions are named after what they count: `round` (model calls of one loop), `part` (the planned parts of a
 *   run, from 0), never a generic `index`;
 * - the events are shared, an agent's own vocabulary is not: a planned part is a `type` and a `text` in any
 *   agent's words (the trial assistant's intent labels are typed in its result, ChatAnswer, not here);
 * - the final event is not a progress event: the stream helper sends exactly one `result` (the route's result
 *   body) or `error` after the work returns or throws.
 */

/** One planned part of a run: its kind, in the agent's own words, and what it is about. */
const PlannedPart = z.object({
  type: z.string().describe("the part's kind in its agent's words (the trial assistant: an intent label such as data_question)"),
  text: z.string().describe('the words of the request this part is about'),
});

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
      parts: z.array(PlannedPart).describe('the parts the run will answer, in order'),
      routedBy: z.enum(['model', 'rules']),
      routingFallback: z.string().nullable().describe('why keyword rules planned it (the trial assistant: model_unavailable, answer_unusable, empty_message); null when the model did'),
    })
    .describe('what the run will do, in order, and whether the model or keyword rules planned it'),
  part_started: z
    .object({ type: z.literal('part_started'), part: z.int().describe('position in the plan, from 0'), planned: PlannedPart })
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
    .object({
      type: z.literal('part_finished'),
      part: z.int(),
      planned: PlannedPart,
      answer: z.string(),
      ok: z.boolean().describe('false when a limit ended it, the user may not do it, or it was refused'),
      ending: z.string().describe("how it ended, in its agent's words (the trial assistant: ChatPart's ending)"),
    })
    .describe('one planned part is done: its whole answer and how it ended'),
  waiting: z
    .object({
      type: z.literal('waiting'),
      runId: z.string().optional(),
      awaiting: z.enum(['answer', 'approval']).describe('what the run needs from a person'),
      prompt: z.string().describe('what to show them'),
    })
    .describe('the run stopped for a person ("waiting for you"): it goes on once they answer or decide'),
  text_replaced: z
    .object({
      type: z.literal('text_replaced'),
      text: z.string().describe('the whole answer as it now stands'),
      reason: z.string().optional().describe('why, when the engine says (e.g. moderation)'),
    })
    .describe('the answer written so far was replaced (a moderation rule, Dify\'s message_replace): show `text` instead of everything the text_delta events gave'),
} as const;

/** Any one progress event, as the runtime emits it and a client parses it. */
export const RunEvent = z.discriminatedUnion('type', Object.values(RunEvents) as unknown as UnionOf<typeof RunEvents>);
export type RunEvent = z.infer<typeof RunEvent>;

/** The map's schemas as the tuple discriminatedUnion takes; Object.values loses the tuple type, not the members. */
type UnionOf<Events extends Record<string, z.ZodObject>> = [Events[keyof Events], ...Array<Events[keyof Events]>];

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

/** The OpenAPI description of a streaming route's 200 response, written from the events' own descriptions. */
export function runStreamDescription(result: string): string {
  const progress = RUN_EVENT_NAMES.map((name) => `\`${name}\` (${RunEvents[name].description})`).join('; ');
  return `Server-sent events, each \`event: <name>\` with one \`data:\` line of JSON that repeats the name as \`type\`. While the run works, any of: ${progress}. Then exactly one \`result\` (${result}) or \`error\` ({code, message, details}), and the stream ends. Closing the connection stops the run; its trace is marked cancelled.`;
}
