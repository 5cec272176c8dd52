import { AgentResult } from './agent.js';
import { runStreamDescription, runStreamEvents } from './run-events.js';

/** POST /api/agent/run/stream answers `text/event-stream`: the run events (src/contract/run-events.ts), then one `result` or `error`. */
export const AgentStreamEvents = runStreamEvents(AgentResult);

/** What the OpenAPI document says the 200 response is. */
export const AGENT_STREAM_DESCRIPTION = runStreamDescription('the AgentResult POST /api/agent/run returns; `status: "cancelled"` when the run was stopped');
