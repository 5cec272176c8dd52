import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ClinAgentError } from '../core/errors.js';
import { UUID_PATTERN } from '../core/ids.js';

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
    const problems = fastifyError.validation.map((v) => {
      const where = `${fastifyError.validationContext ?? 'body'}${v.instancePath.replace(/\//g, '.')}`;
      const missing = (v.params as { missingProperty?: string })?.missingProperty;
      if (missing) return `${where}.${missing}: is required`;
      const extra = (v.params as { additionalProperty?: string })?.additionalProperty;
      if (extra) return `${where}.${extra}: is not a known field; remove it`;
      if ((v.params as { pattern?: string })?.pattern === UUID_PATTERN) return `${where}: must be a UUID such as 3f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13; copy the id from the list it came from`;
      return `${where}: ${v.message}`;
    });
    void reply.status(400).send({ code: 'VALIDATION_FAILED', message: `Invalid request:\n- ${problems.join('\n- ')}`, details: { problems } });
    return;
  }
  if (fastifyError.statusCode && fastifyError.statusCode < 500) {
    const code = fastifyError.statusCode === 413 ? 'VALIDATION_FAILED' : fastifyError.statusCode === 404 ? 'NOT_FOUND' : fastifyError.statusCode === 415 ? 'UNSUPPORTED_FILE' : 'VALIDATION_FAILED';
    void reply.status(fastifyError.statusCode).send({ code, message: fastifyError.message, details: {} });
    return;
  }
  request.log.error({ err: error }, 'unhandled error');
  void reply.status(500).send({ code: 'INTERNAL', message: `Internal error. The server log has the details under request id ${request.id}.`, details: { requestId: request.id } });
}

