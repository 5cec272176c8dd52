import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../core/db/database-unavailable.js';
import { ClinAgentError } from '../core/errors.js';
import { UUID_PATTERN } from '../core/ids.js';

// ajv runs with allErrors and reports every bad item: 100 000 empty record ids answered 12 MB. The first
// fifty show the pattern; the count says how many more there are.
const SCHEMA_PROBLEMS_LISTED = 50;
// A field name the client made up is named, not echoed whole: a megabyte-long key answered a megabyte.
const NAME_CHARS_SHOWN = 60;

const shown = (name: string) => (name.length > NAME_CHARS_SHOWN ? `${name.slice(0, NAME_CHARS_SHOWN)}…` : name);

/**
 * One error shape for every route: `{ code, message, details }`. Our own errors pass through with their
 * status; schema failures become 400 naming each field; anything else is a 500 whose text stays in the
 * log (it may hold internals) and whose response carries the request id to find it.
 */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  if (ClinAgentError.isInstance(error)) {
    if (error.status >= 500) request.log.error({ err: error }, error.message);
    void reply.status(error.status).send(error.toJSON());
    return;
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const problemCount = fastifyError.validation.length;
    const problems = fastifyError.validation.slice(0, SCHEMA_PROBLEMS_LISTED).map((v) => {
      const where = `${fastifyError.validationContext ?? 'body'}${v.instancePath.replace(/\//g, '.')}`;
      const missing = (v.params as { missingProperty?: string })?.missingProperty;
      if (missing) return `${where}.${missing}: is required`;
      const extra = (v.params as { additionalProperty?: string })?.additionalProperty;
      if (extra) return `${where}.${shown(extra)}: is not a known field; remove it`;
      if ((v.params as { pattern?: string })?.pattern === UUID_PATTERN) {
        // An id the client makes itself (an idempotency key) is not copied from anywhere: say how to make one.
        const clientMade = where.endsWith('.clientMessageId');
        return `${where}: must be a UUID such as 3f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13; ${clientMade ? 'make a new one for each message (crypto.randomUUID()) and send it again only with a resend of that message' : 'copy the id from the list it came from'}`;
      }
      return `${where}: ${v.message}`;
    });
    const more = problemCount - problems.length;
    const lines = more > 0 ? [...problems, `... and ${more} more`] : problems;
    void reply.status(400).send({ code: 'VALIDATION_FAILED', message: `Invalid request:\n- ${lines.join('\n- ')}`, details: more > 0 ? { problems, problemCount } : { problems } });
    return;
  }
  if (fastifyError.statusCode && fastifyError.statusCode < 500) {
    const code = fastifyError.statusCode === 413 ? 'VALIDATION_FAILED' : fastifyError.statusCode === 404 ? 'NOT_FOUND' : fastifyError.statusCode === 415 ? 'UNSUPPORTED_FILE' : 'VALIDATION_FAILED';
    // Fastify's own "Request body is too large" says nothing of what to do.
    const message = fastifyError.statusCode === 413 && fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
      ? 'The request body is larger than this route accepts. Send less: a smaller file (uploads are limited by UPLOAD_MAX_BYTES, consult images by CONSULT_IMAGE_MAX_BYTES), or the text in parts.'
      : fastifyError.message;
    void reply.status(fastifyError.statusCode).send({ code, message, details: {} });
    return;
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'the database was unavailable');
    void reply.status(503).send({ code: 'DATABASE_UNAVAILABLE', message: 'The database is restarting or unreachable, so this request may not have completed. Reload to see whether it took effect, then try again in a few seconds.', details: {} });
    return;
  }
  request.log.error({ err: error }, 'unhandled error');
  void reply.status(500).send({ code: 'INTERNAL', message: `Internal error. The server log has the details under request id ${request.id}.`, details: { requestId: request.id } });
}


