import type { ApiError } from './api-error';
import { createClinAgentApi } from './clinagent-api';
import { createConsultApi } from './consult-api';
import { createEventStream } from './event-stream';
import { createHttpClient } from './http-client';
import { createProtocolApi } from './protocol-api';
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

const session = { getToken: readToken, onUnauthorized: (error: ApiError) => unauthorizedListener(error) };

/** Server-sent event routes (agent runs, the assistant's chat), with the same token and 401 handling as `api`. */
const postEventStream = createEventStream(session);

const http = createHttpClient(session);

export const api = createClinAgentApi(http, postEventStream);

/** The Protocol Agent's routes and the sample-size calculator. */
export const protocolApi = createProtocolApi(http, postEventStream);

/** The dermatology consult's routes. */
export const consultApi = createConsultApi(http, postEventStream);

/** One agent turn as it happens (POST /api/agent/run/stream). */
export const streamAgent = createAgentStream(postEventStream);

export { ApiError } from './api-error';
export type * from './types';
export type { LowYieldThresholds, RuleYieldList, RuleYieldRow } from './rule-yield-api';
export type { RunProgressEvent } from './event-stream';
export type * from './assistant-api';
export type * from './protocol-api';
export type * from './consult-api';
