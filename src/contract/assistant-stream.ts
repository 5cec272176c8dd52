import { ChatAnswer } from './assistant.js';
import { runStreamDescription, runStreamEvents } from './run-events.js';

/** POST /api/iit/projects/:projectId/chat/stream answers `text/event-stream`: the run events, then one `result` or `error`. */
export const ChatStreamEvents = runStreamEvents(ChatAnswer);

/** What the OpenAPI document says the 200 response is. */
export const CHAT_STREAM_DESCRIPTION = runStreamDescription('the ChatAnswer POST .../chat returns');
