// The result contract is the server's own type, imported for types only (erased from the bundle), so the
// console cannot drift from what /api/agent/run returns.
import type { AgentResult as ServerAgentResult } from '../../../src/agent/result.js';
import type { ToolCallResult } from '../../../src/core/tools/registry.js';
import type { ReferenceChunk } from '../../../src/rag/types.js';
import type { TokenInfo } from '../../../src/core/auth/users.js';

/**
 * Shapes of the HTTP API as the console sees them. Result types come from the server as type-only imports
 * (nothing of the server is bundled); the smaller route shapes mirror the server's route schemas.
 */

/** Every non-2xx body the server sends. `message` is written for the user and says what to do next. */
export interface ApiErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface User {
  id: string;
  name: string;
  role: string;
}

export interface Me extends User {
  projects: string[];
}

export type Role = 'admin' | 'pi' | 'coordinator' | 'viewer';

/** A user as admins manage them (GET /api/users). */
export interface ManagedUser extends User {
  createdAt: string;
  /** Set while deactivated: the user's tokens answer 401. */
  deactivatedAt: string | null;
}

/** A token as its owner and admins see it (the server's type; never the token itself). */
export interface AccountToken extends TokenInfo {
  /** The token this browser is signed in with. */
  current?: boolean;
}

export interface LoginResponse {
  token: string;
  user: User;
}

export interface Health {
  status: 'ok';
  version: string;
  database: 'pglite' | 'postgres';
  llm: { configured: boolean; model: string; missing: string[] };
  embedding: { model: string; local: boolean };
}

export interface ScenarioDocument {
  documentId: string;
  sourceFile: string;
  chunkCount: number;
}

export interface Scenario {
  id: string;
  name: string;
  description: string;
  rag: { enabled: boolean; collection: string; topK: number };
  tools: string[];
  outputType: string;
  documents: ScenarioDocument[];
}

export interface AgentRunRequest {
  scenarioId: string;
  input: string;
  /** Omitted means "all of the scenario's documents". */
  options?: { documentIds?: string[] };
}

export type Reference = ReferenceChunk;
export type ToolCall = ToolCallResult;
export type AgentResult = ServerAgentResult;

/** Token counts and duration are absent for spans that have none (a retrieval uses no tokens). */
export interface TraceSpan {
  kind: string;
  name: string;
  status: string;
  durationMs?: number | null;
  promptTokens?: number | null;
  completionTokens?: number | null;
  error?: string | null;
}

export interface Trace {
  id: string;
  kind: string;
  name: string;
  status: string;
  spans: TraceSpan[];
}

export type * from './trial-types';

/** The subset of OpenAPI 3 the API page reads; anything else in the document is ignored. */
export interface OpenApiDocument {
  openapi?: string;
  info?: { title?: string; version?: string; description?: string };
  tags?: Array<{ name: string; description?: string }>;
  paths?: Record<string, Record<string, OpenApiOperation | unknown>>;
  components?: { schemas?: Record<string, unknown> };
}

export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: unknown }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}
