import { errorResponses as contractErrors, jsonSchema, MAX_OFFSET, uuidParams as contractUuidParams, Uuid } from '../contract/index.js';

/**
 * Fastify forms of contract pieces, for routes whose schemas are not in src/contract/routes.ts yet. A route
 * that is takes everything from `routeSchema(...)` instead; src/http/contract-agreement.test.ts lists the rest.
 */
export const errorResponses = Object.fromEntries(Object.entries(contractErrors).map(([status, schema]) => [status, jsonSchema(schema)]));

/** A string that must be a UUID: refused with 400 before it can reach a `uuid` column (where PostgreSQL would throw). */
export const uuidString = jsonSchema(Uuid, 'input');

/** Params schema of a route whose named params are all UUIDs. */
export function uuidParams(...names: string[]) {
  return jsonSchema(contractUuidParams(...names), 'input');
}

export { MAX_OFFSET };
