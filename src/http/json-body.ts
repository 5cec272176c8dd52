import type { FastifyInstance } from 'fastify';
import { ClinAgentError } from '../core/errors.js';
import { findTooDeep, tooDeepMessage } from '../core/nesting-depth.js';

/**
 * Every JSON body is parsed by Fastify's own parser (prototype-poisoning checks kept) and then measured: one that
 * nests deeper than MAX_NESTING_DEPTH is refused with 400 before any hook, schema or handler walks it. Fastify
 * has no depth option and ajv none either, so this is the one place for the limit.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, body as string, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      const tooDeep = findTooDeep(value, 'body');
      if (tooDeep) return done(new ClinAgentError('VALIDATION_FAILED', tooDeepMessage('The request body', tooDeep), { field: tooDeep.path, limit: tooDeep.limit }), undefined);
      done(null, value);
    });
  });
}
