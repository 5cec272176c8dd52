import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClinAgentError } from '../core/errors.js';

/** Deeper than any body we accept; past it the walk stops rather than recurse without bound. */
const MAX_DEPTH = 32;

/**
 * PostgreSQL text cannot hold U+0000: a NUL byte in any id, filter or field reaches the database as
 * "invalid byte sequence" and would answer 500. No route has a use for one, so they are refused here,
 * once for every route, before schema validation, naming where the byte was.
 *
 * Uploaded file contents are Buffers and are not looked at: a PDF legitimately contains NUL bytes, and
 * the extracted text is the ingest code's concern.
 */
export async function refuseNulBytes(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const found = findNul(request.params, 'params') ?? findNul(request.query, 'querystring') ?? findNul(request.body, 'body');
  if (found) {
    throw new ClinAgentError('VALIDATION_FAILED', `${found} contains a NUL character (\\u0000), which ClinAgent cannot store. Remove it and send the request again.`, { field: found });
  }
}

function findNul(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], `${path}[${i}]`, depth + 1);
      if (hit) return hit;
    }
    return undefined;
  }
  for (const [key, inner] of Object.entries(value)) {
    const where = `${path}.${key.replace(/\u0000/g, '\\u0000')}`;
    if (key.includes('\u0000')) return where;
    const hit = findNul(inner, where, depth + 1);
    if (hit) return hit;
  }
  return undefined;
}
