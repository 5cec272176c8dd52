import type { FastifyPluginAsync } from 'fastify';
import type { ProtocolDocumentService } from '../../trial/protocol-documents/protocol-document-service.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';
import type { Upload } from '../multipart-body.js';

/** JSON `{ sourceFile, text }`, or multipart with a `file` part (and optionally `sourceFile`). */
interface IngestBody {
  sourceFile?: string;
  text?: string;
  file?: Upload;
}

/** A trial project's protocol documents, searched by the trial assistant (search_protocol). Checks live in the service. */
export const trialProtocolRoutes: FastifyPluginAsync<{ documents: ProtocolDocumentService }> = async (app, { documents }) => {
  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/protocol-documents', {
    schema: { tags: ['trial assistant'], summary: "The project's protocol documents (members)", ...routeSchema('GET /api/iit/projects/:projectId/protocol-documents') },
  }, async (request) => ({ documents: await documents.list(requireUser(request), request.params.projectId) }));

  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/protocol-documents/search-index', {
    schema: {
      tags: ['trial assistant'],
      summary: "Where the search index of the project's protocol documents stands: chunks, how many are indexed, whether queries use it yet (members). A background job builds it; searches never wait for it.",
      ...routeSchema('GET /api/iit/projects/:projectId/protocol-documents/search-index'),
    },
  }, async (request) => documents.searchIndex(requireUser(request), request.params.projectId));

  app.post<{ Params: { projectId: string }; Body: IngestBody }>('/api/iit/projects/:projectId/protocol-documents', {
    config: { access: 'write' },
    schema: {
      tags: ['trial assistant'],
      summary: 'Add a protocol document to the project: JSON {sourceFile, text} or multipart (file: .txt .md .pdf, optional sourceFile). The same sourceFile again replaces that document. Coordinators, PIs and admins.',
      consumes: ['application/json', 'multipart/form-data'],
      ...routeSchema('POST /api/iit/projects/:projectId/protocol-documents'),
    },
  }, async (request, reply) => {
    const body = request.body ?? {};
    const result = await documents.ingest(requireUser(request), request.params.projectId, { sourceFile: body.sourceFile, text: body.text, file: body.file });
    return reply.status(201).send(result);
  });

  app.delete<{ Params: { projectId: string; documentId: string } }>('/api/iit/projects/:projectId/protocol-documents/:documentId', {
    config: { access: 'write' },
    schema: { tags: ['trial assistant'], summary: 'Delete a protocol document of the project and its chunks (audited). Coordinators, PIs and admins.', ...routeSchema('DELETE /api/iit/projects/:projectId/protocol-documents/:documentId') },
  }, async (request, reply) => {
    await documents.delete(requireUser(request), request.params.projectId, request.params.documentId);
    return reply.status(204).send();
  });
};
