/**
 * Shapes of the HTTP API as the console sees them. They mirror the server's route schemas; the console
 * keeps its own copy because it is bundled for the browser and must not pull in server modules.
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

export interface Reference {
  documentId: string;
  scenarioId: string;
  collection: string;
  sourceFile: string;
  chunkId: string;
  chunkIndex: number;
  content: string;
  score: number;
}

export interface ToolCall {
  toolName: string;
  success: boolean;
  arguments: unknown;
  result: unknown;
  error: string;
}

export interface AgentResult {
  answer: string;
  structuredOutput: Record<string, unknown>;
  references: Reference[];
  toolCalls: ToolCall[];
  rawOutput: string;
  modelName: string;
  latencyMs: number;
  status: 'success' | 'failed';
  /** Why a failed run failed; on a successful run, the structured-output parse problem, if any. */
  error: string;
  traceId: string;
  parseError?: string;
}

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
