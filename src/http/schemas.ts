import { UUID_PATTERN } from '../core/ids.js';

/** JSON schemas shared by several routes; every route declares its error responses with `errorResponses`. */
export const errorBody = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object', additionalProperties: true } },
  required: ['code', 'message'],
} as const;

export const errorResponses = {
  400: errorBody,
  401: errorBody,
  403: errorBody,
  404: errorBody,
  409: errorBody,
  500: errorBody,
} as const;

export const userBody = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, role: { type: 'string', enum: ['admin', 'pi', 'coordinator', 'viewer'] } },
  required: ['id', 'name', 'role'],
} as const;

export const referenceBody = {
  type: 'object',
  properties: {
    documentId: { type: 'string' },
    scenarioId: { type: 'string' },
    collection: { type: 'string' },
    sourceFile: { type: 'string' },
    chunkId: { type: 'string' },
    chunkIndex: { type: 'integer' },
    content: { type: 'string' },
    score: { type: 'number' },
  },
} as const;

export const toolCallBody = {
  type: 'object',
  properties: {
    toolName: { type: 'string' },
    success: { type: 'boolean' },
    arguments: {},
    result: {},
    error: { type: 'string' },
  },
} as const;

export const agentResultBody = {
  type: 'object',
  properties: {
    answer: { type: 'string' },
    structuredOutput: { type: 'object', additionalProperties: true },
    references: { type: 'array', items: referenceBody },
    toolCalls: { type: 'array', items: toolCallBody },
    rawOutput: { type: 'string' },
    modelName: { type: 'string' },
    latencyMs: { type: 'integer' },
    status: { type: 'string', enum: ['success', 'failed'] },
    error: { type: 'string' },
    traceId: { type: 'string' },
  },
  required: ['answer', 'structuredOutput', 'references', 'toolCalls', 'rawOutput', 'modelName', 'latencyMs', 'status', 'error', 'traceId'],
} as const;

export const documentInfoBody = {
  type: 'object',
  properties: {
    documentId: { type: 'string' },
    scenarioId: { type: 'string' },
    collection: { type: 'string' },
    sourceFile: { type: 'string' },
    chunkCount: { type: 'integer' },
    contentHash: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;

/** A string that must be a UUID: refused with 400 before it can reach a `uuid` column (where PostgreSQL would throw). */
export const uuidString = { type: 'string', pattern: UUID_PATTERN, description: 'a UUID, e.g. 3f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13' } as const;

/** Params schema of a route whose named params are all UUIDs. */
export function uuidParams<const K extends string>(...names: K[]) {
  return { type: 'object', properties: Object.fromEntries(names.map((n) => [n, uuidString])) as Record<K, typeof uuidString>, required: names } as const;
}

/**
 * Largest page offset accepted. "1e99" passes as an integer, and PostgreSQL refuses an OFFSET beyond bigint;
 * no project has two billion rows to page through.
 */
export const MAX_OFFSET = 2_147_483_647;
