import type { ApiError } from './api-error';
import { createClinAgentApi } from './clinagent-api';
import { createHttpClient } from './http-client';
import { createAgentStream } from './stream-agent';
import { readToken } from './token-storage';

/**
 * The browser has exactly one server and one signed-in user, so the console shares one client. The session
 * store registers itself as the 401 listener at start-up; the client never imports stores.
 */
let unauthorizedListener: (error: ApiError) => void = () => {};

export function onUnauthorized(listener: (error: ApiError) => void): void {
  unauthorizedListener = listener;
}

export const api = createClinAgentApi(
  createHttpClient({ getToken: readToken, onUnauthorized: (error) => unauthorizedListener(error) }),
);

/** One agent turn as it happens (POST /api/agent/run/stream), with the same token and 401 handling as `api`. */
export const streamAgent = createAgentStream({ getToken: readToken, onUnauthorized: (error) => unauthorizedListener(error) });

export { ApiError } from './api-error';
export type * from './types';
export type { AgentProgressEvent } from './stream-agent';
