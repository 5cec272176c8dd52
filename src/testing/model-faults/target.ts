import type { RecordedRequest } from '../scripted-model.js';
import type { AnswerShapes, Fault } from './faults.js';
import type { FaultServer } from './fault-server.js';

export type Engine = 'pglite' | 'postgres';

/** What one turn under a fault came to, as the person and the store saw it. */
export interface TurnOutcome {
  /** The HTTP status of the request that started or answered the turn (a background job: 200, or 500 when it threw something that is not ours). */
  status: number;
  /** The text meant for the person (the answer, the refusal, the notice an admin reads). */
  message: unknown;
  /** A streamed turn: the text the person watched appear before the final event (checked like the message). */
  watched?: string;
  /** Anything the invariant check needs (ids, the response body). */
  detail?: Record<string, unknown>;
}

/** One agent of the platform under the fault suite: how a turn starts, what the person gets, what must hold. */
export interface FaultTarget {
  /** The matrix row. */
  id: string;
  /** Ids in the agent-definition registry, or shipped scenario ids, this target covers (the completeness check). */
  covers: readonly string[];
  /** Engines the target runs on (the consult's knowledge base and RAG need pgvector: PGlite only). */
  engines: readonly Engine[];
  /** Model calls one turn may make under any fault: routing, rounds, corrections and retries together. */
  maxModelCalls: number;
  /** Longest a turn may take to end (a background run: to settle), in ms. */
  turnLimitMs: number;
  /** Once per server, with the healthy model: users, projects, records, skills. */
  setUp(server: FaultServer): Promise<TargetSession>;
}

export interface TargetSession extends AnswerShapes {
  /**
   * The model calls that are this target's, for the count (default: every call during the turn). Runs advanced by
   * job workers may still be retrying a fault of an earlier cell; their calls are theirs, not this turn's.
   */
  owns?(request: RecordedRequest): boolean;
  /** Before each cell, with the healthy model: a fresh conversation, a run waiting for its answer, a report to keep. */
  prepare?(): Promise<void>;
  /** The turn the fault answers. */
  turn(fault: Fault): Promise<TurnOutcome>;
  /** With the healthy model again: the next message or run; it must be accepted (not 409, not 5xx). */
  next(): Promise<{ status: number; message?: unknown }>;
  /** The deterministic checks that must hold whatever the model said; one line per broken one. */
  invariant(fault: Fault, outcome: TurnOutcome): Promise<string[]>;
}
