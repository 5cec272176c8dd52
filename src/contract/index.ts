/**
 * The HTTP API contract: zod schemas of every route's params, querystring, body and responses, the JSON
 * Schemas Fastify validates, serializes and publishes (GET /api/openapi.json) made from them, and the
 * TypeScript types the console uses. It imports nothing but zod, so the console can import its types
 * (`import type`, erased from the bundle) without reaching into the server.
 */
export * from './common.js';
export * from './json-schema.js';
export * from './system.js';
export * from './auth.js';
export * from './project-members.js';
export * from './agent.js';
export * from './agents.js';
export * from './run-events.js';
export * from './agent-stream.js';
export * from './traces.js';
export * from './conversations.js';
export * from './agent-runs.js';
export * from './trial-data.js';
export * from './trial-record.js';
export * from './trial-qc.js';
export * from './trial-skills.js';
export * from './trial-queries.js';
export * from './trial-skill-tools.js';
export * from './trial-rule-yield.js';
export * from './trial-protocol.js';
export * from './assistant.js';
export * from './assistant-stream.js';
export * from './tools.js';
export * from './protocol-agent.js';
export * from './consult.js';
export * from './routes.js';
