/**
 * What a run reports while it works: the one event vocabulary of every agent (runAgent, the trial assistant, the
 * durable agents), made from the same items the trace stores. A client renders text as it comes and tools as they
 * happen; server-sent events carry these one to one (`event:` is `type`), documented for clients once in
 * src/contract/run-events.ts.
 *
 * How names are chosen, so the next agent adds none for a thing that already has one:
 * - something with a duration is a pair `<thing>_started` / `<thing>_finished` (run, part, tool call; a round ends
 *   with `round_finished` alone, as its start says nothing a client needs);
 * - a single fact is a bare noun or `<thing>_delta` for a piece of a larger whole (`plan`, `waiting`, `text_delta`);
 * - positions are named after what they count: `round` (model calls of one loop), `part` (the planned parts of a
 *   run, from 0), never a generic `index`;
 * - the final event is not an AgentEvent: the stream helper sends exactly one `result` (the route's result body)
 *   or `error` after the work returns or throws.
 */
export type AgentEvent =
  /** The run has a trace (and, in a conversation, its id; a durable run its id): a client that stops it can still link to it. */
  | { type: 'run_started'; traceId: string; conversationId?: string; runId?: string }
  /** What the run will do, in order: each planned part (for the trial assistant an intent of the message), and how it was planned. */
  | { type: 'plan'; intents: PlannedPart[]; routedBy: 'model' | 'rules'; routingFallback: string | null }
  /** One planned part begins; the events up to its `part_finished` carry `part`. */
  | { type: 'part_started'; part: number; intent: PlannedPart }
  /** A piece of the model's visible answer (never its thinking). */
  | { type: 'text_delta'; round: number; text: string; part?: number }
  /**
   * The model asked for a tool; it is about to run (or be refused). `arguments` is left out by agents whose users
   * see tool names only (the trial assistant): the arguments stay in the trace.
   */
  | { type: 'tool_call_started'; round: number; callId: string; name: string; arguments?: string; part?: number }
  | { type: 'tool_call_finished'; round: number; callId: string; name: string; success: boolean; error?: string; part?: number }
  /**
   * A model call ended. `toolCalls` is how many native tool calls it asked for (they run next): an agent that must
   * show users only its final answer (seed 000's ReAct engine) holds a round's text until it knows it is 0.
   * `truncated`: the answer was cut off by the token limit; its text is not the answer, and the model is asked again.
   */
  | { type: 'round_finished'; round: number; promptTokens: number; completionTokens: number; toolCalls: number; part?: number; truncated?: true }
  /** One planned part is done: its whole answer, whether it succeeded, and how it ended. */
  | { type: 'part_finished'; part: number; intent: PlannedPart; answer: string; ok: boolean; ending: string }
  /** The run stopped for a person: it goes on once they answer or decide (the durable runs' resume routes). */
  | { type: 'waiting'; runId?: string; awaiting: 'answer' | 'approval'; prompt: string };

/** One planned part of a run: its kind and the words it is about. */
export interface PlannedPart {
  type: string;
  text: string;
}

export type AgentEventType = AgentEvent['type'];

export type AgentEventSink = (event: AgentEvent) => void;
