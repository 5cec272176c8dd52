import { z } from 'zod';
import { AgentResult } from './agent.js';
import { ApiErrorBody } from './common.js';

/**
 * POST /api/agent/run/stream answers `text/event-stream`. Each event is `event: <name>` and one `data:` line of
 * JSON. Zero or more progress events (mirroring the agent loop's AgentEvent, src/agent/loop/events.ts; their
 * data repeats the name as `type`), then exactly one `result` or `error`, then the stream ends.
 */
export const AgentStreamEvents = {
  run_started: z.object({ type: z.literal('run_started'), traceId: z.string().describe('the trace of this run, kept even if the run is stopped'), conversationId: z.string().optional() }),
  text_delta: z.object({ type: z.literal('text_delta'), round: z.int(), text: z.string().describe("a piece of the model's visible answer, never its thinking") }),
  tool_call_started: z.object({ type: z.literal('tool_call_started'), round: z.int(), callId: z.string(), name: z.string(), arguments: z.string().describe('JSON text as the model wrote it') }),
  tool_call_finished: z.object({ type: z.literal('tool_call_finished'), round: z.int(), callId: z.string(), name: z.string(), success: z.boolean(), error: z.string().optional() }),
  round_finished: z.object({ type: z.literal('round_finished'), round: z.int(), promptTokens: z.int(), completionTokens: z.int(), toolCalls: z.int() }),
  /** The same AgentResult POST /api/agent/run returns; `status: "cancelled"` when the run was stopped. */
  result: AgentResult,
  /** No result could be produced at all (an internal fault): the usual error body. */
  error: ApiErrorBody,
} as const;

export type AgentStreamEventName = keyof typeof AgentStreamEvents;
/** One received event: its name and its parsed data. */
export type AgentStreamEvent = { [Name in AgentStreamEventName]: { event: Name; data: z.infer<(typeof AgentStreamEvents)[Name]> } }[AgentStreamEventName];

/** What the OpenAPI document says the 200 response is. */
export const AGENT_STREAM_DESCRIPTION =
  'Server-sent events: `run_started` (the trace id), `text_delta`, `tool_call_started`, `tool_call_finished` and `round_finished` while the run works, then one `result` (the AgentResult of POST /api/agent/run) or `error` ({code, message, details}). Closing the connection stops the run; its trace is marked cancelled.';
