import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClinAgentError } from '../core/errors.js';

type BodySchema = { properties?: Record<string, { type?: unknown }> };

/**
 * A route that takes multipart declares each file part as an object field of its body (form fields are text). A
 * JSON body can put anything there (`{"file": {}}` passed the schema and reached the handler as a file without
 * bytes: 500), so in a request that is not multipart such a field is refused here, for every upload route.
 */
export async function refuseJsonUploadFields(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (request.isMultipart() || !request.body || typeof request.body !== 'object') return;
  const schema = request.routeOptions.schema as { consumes?: string[]; body?: BodySchema } | undefined;
  if (!schema?.consumes?.includes('multipart/form-data')) return;
  for (const [field, property] of Object.entries(schema.body?.properties ?? {})) {
    if (property.type !== 'object' || !Object.hasOwn(request.body, field)) continue;
    throw new ClinAgentError(
      'VALIDATION_FAILED',
      `${field}: a file is sent as multipart/form-data, in a part named "${field}"; a JSON body cannot carry one. Send the form as multipart${field === 'file' ? ', or JSON with the text instead ({"sourceFile": "protocol.md", "text": "..."})' : ''}.`,
      { field },
    );
  }
}
