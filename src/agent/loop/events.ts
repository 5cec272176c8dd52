/**
 * What an agent run reports while it works, made from the same items the trace stores: a client renders text as
 * it comes and tools as they happen, then receives the final result. Server-sent events carry these one to one.
 */
export type AgentEvent =
  /** The run has a trace (and, in a conversation, its id): a client that stops the run can still link to it. */
  | { type: 'run_started'; traceId: string; conversationId?: string }
  /** A piece of the model's visible answer (never its thinking). */
  | { type: 'text_delta'; round: number; text: string }
  /** The model asked for a tool; it is about to run (or be refused). */
  | { type: 'tool_call_started'; round: number; callId: string; name: string; arguments: string }
  | { type: 'tool_call_finished'; round: number; callId: string; name: string; success: boolean; error?: string }
  /**
   * A model call ended. `toolCalls` is how many native tool calls it asked for (they run next): an agent that must
   * show users only its final answer (seed 000's ReAct engine) holds a round's text until it knows it is 0.
   */
  | { type: 'round_finished'; round: number; promptTokens: number; completionTokens: number; toolCalls: number };

export type AgentEventSink = (event: AgentEvent) => void;
