/**
 * Shapes of the HTTP API as the console sees them: the types inferred from the API contract (src/contract), the
 * same zod schemas the server validates and serializes with. Imported for types only, so nothing of the server
 * is bundled; src/contract is the only server code the console may import.
 */
export type {
  AccountToken,
  AgentResult,
  AgentRunRequest,
  AgentSummary,
  ApiErrorBody,
  CreateUserResponse,
  Health,
  InvalidScenario,
  LoginResponse,
  ManagedUser,
  Me,
  MemberAccess,
  ProjectMember,
  ProjectRole,
  Reference,
  Role,
  Scenario,
  ScenarioDocument,
  ToolCall,
  Trace,
  TraceSpan,
  User,
} from '../../../src/contract/index.js';

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
