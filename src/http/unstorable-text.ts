import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClinAgentError } from '../core/errors.js';
import { MAX_NESTING_DEPTH } from '../core/nesting-depth.js';
import { escapeUnstorable, unstorableKind, type UnstorableKind } from '../core/unstorable-text.js';

/** No body deeper than this gets past the JSON parser (json-body.ts), so the walk sees every string of one. */
const MAX_DEPTH = MAX_NESTING_DEPTH;
/** A key is named in the error; one pasted paragraph long is cut, so the answer never echoes a flood. */
const KEY_CHARS_SHOWN = 60;

type Unstorable = { field: string; kind: UnstorableKind };

/**
 * Text PostgreSQL cannot store, refused here once for every route, before schema validation, naming where
 * it was:
 * - U+0000: a NUL byte in any id, filter or field reaches the database as "invalid byte sequence";
 * - a lone UTF-16 surrogate (`"\ud800"` in JSON, half of an emoji or rare CJK character that a client cut):
 *   JSON.parse accepts it, but jsonb refuses the escape, so the audit entry of the change failed and the
 *   route answered 500, after a chat had already opened its conversation.
 * No route has a use for either, and refusing both before any handler runs is what keeps a half-done write
 * from happening at all.
 *
 * Uploaded file contents are Buffers and are not looked at: a PDF legitimately contains NUL bytes, and
 * the extracted text is the ingest code's concern (multipart text fields are decoded as UTF-8 and so can
 * hold no lone surrogate).
 */
export async function refuseUnstorableText(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const found = findUnstorable(request.params, 'params') ?? findUnstorable(request.query, 'querystring') ?? findUnstorable(request.body, 'body');
  if (!found) return;
  const { field } = found;
  throw found.kind === 'nul'
    ? new ClinAgentError('VALIDATION_FAILED', `${field} contains a NUL character (\\u0000), which ClinAgent cannot store. Remove it and send the request again.`, { field })
    : new ClinAgentError(
        'VALIDATION_FAILED',
        `${field} contains a lone UTF-16 surrogate (half of a character such as an emoji, e.g. \\ud800 without its pair), which is not valid Unicode text and cannot be stored. Send the whole character or remove it, then send the request again.`,
        { field },
      );
}

function findUnstorable(value: unknown, path: string, depth = 0): Unstorable | undefined {
  if (typeof value === 'string') {
    const kind = unstorableKind(value);
    return kind && { field: path, kind };
  }
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findUnstorable(value[i], `${path}[${i}]`, depth + 1);
      if (hit) return hit;
    }
    return undefined;
  }
  for (const [key, inner] of Object.entries(value)) {
    const where = `${path}.${printable(key)}`;
    const keyProblem = unstorableKind(key);
    if (keyProblem) return { field: where, kind: keyProblem };
    const hit = findUnstorable(inner, where, depth + 1);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * A key as the error names it: what cannot be stored (or printed in a log line) is written as its escape, and
 * a long key is cut.
 */
function printable(key: string): string {
  const escaped = escapeUnstorable(key);
  return escaped.length > KEY_CHARS_SHOWN ? `${escaped.slice(0, KEY_CHARS_SHOWN)}…` : escaped;
}
