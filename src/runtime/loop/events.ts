import type { RunEvent } from '../../contract/run-events.js';

/**
 * What a run reports while it works: the one event vocabulary of every agent, declared once as zod schemas in
 * src/contract/run-events.ts (with the rule for naming a new event) and inferred here, so the runtime emits exactly
 * what clients are told they receive. Server-sent events carry these one to one (`event:` is `type`).
 */
export type AgentEvent = RunEvent;

/** One planned part of a run (the `plan` event's parts): its kind in the agent's own words, and its text. */
export type PlannedPart = Extract<AgentEvent, { type: 'plan' }>['parts'][number];

export type AgentEventSink = (event: AgentEvent) => void;
