import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { ClinAgentError } from '../../core/errors.js';
import { extractText, isProjectScope } from '../../rag/index.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';
import { ingestScenarioDocumentsQueue } from '../../core/jobs/queues.js';
import type { Scenario } from '../../runtime/scenarios/load.js';

/** Multipart uploads arrive as `{ filename, data }` (see readMultipartBody in multipart-body.ts); JSON as text. */
interface UploadBody {
  scenarioId: string;
  documentId?: string;
  sourceFile?: string;
  text?: string;
  file?: { filename: string; data: Buffer };
}

export const ragRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  /** A project's document answers here as one that does not exist: its own route checks membership. */
  async function refuseProjectDocument(documentId: string): Promise<void> {
    const document = await ctx.rag.getDocument(documentId);
    if (document && isProjectScope(document.scenarioId)) {
      throw new ClinAgentError('NOT_FOUND', `Document "${documentId}" does not exist among scenario documents. A trial project's protocol documents are managed at /api/iit/projects/:projectId/protocol-documents.`, { documentId });
    }
  }

  function ragScenario(scenarioId: string): Scenario {
    const scenario = ctx.scenarios.get(scenarioId);
    if (!scenario.rag.enabled) {
      throw new ClinAgentError('VALIDATION_FAILED', `Scenario "${scenario.id}" does not use RAG (rag.enabled is false in ${scenario.sourceFile}); enable it there first.`, { field: 'scenarioId' });
    }
    return scenario;
  }

  app.get<{ Querystring: { scenarioId?: string } }>(
    '/api/rag/documents',
    {
      schema: {
        tags: ['rag'],
        summary: 'Documents ingested, optionally for one scenario',
        ...routeSchema('GET /api/rag/documents'),
      },
    },
    // A project's protocol documents are listed by its own route, for its members only.
    async (request) => ({ documents: (await ctx.rag.listDocuments({ scenarioId: request.query.scenarioId })).filter((d) => !isProjectScope(d.scenarioId)) }),
  );

  // A scenario and its documents serve every project, so no member of one project may change them: admins manage
  // them (a project's own protocol documents have their own route, for its writers).
  app.post<{ Body: UploadBody }>(
    '/api/rag/documents',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['rag'],
        summary: 'Ingest a document into a scenario (admin; scenarios serve every project): JSON {scenarioId, sourceFile, text, documentId?} or multipart (scenarioId, documentId?, file: .txt .md .pdf). Re-using a documentId replaces its chunks.',
        consumes: ['application/json', 'multipart/form-data'],
        ...routeSchema('POST /api/rag/documents'),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const user = requireUser(request);
      if (body.documentId !== undefined) await refuseProjectDocument(body.documentId);
      const scenario = ragScenario(body.scenarioId);
      let text: string;
      let sourceFile: string;
      if (body.file) {
        sourceFile = body.sourceFile ?? body.file.filename;
        text = await extractText(body.file.filename, new Uint8Array(body.file.data));
      } else if (body.text !== undefined) {
        if (!body.sourceFile) throw new ClinAgentError('VALIDATION_FAILED', 'body.sourceFile: is required with text; give the file name the text came from.', { field: 'sourceFile' });
        sourceFile = body.sourceFile;
        text = body.text;
      } else {
        throw new ClinAgentError('VALIDATION_FAILED', 'Send either JSON with "text" and "sourceFile", or a multipart form with a "file" part.', { field: 'text' });
      }
      const result = await ctx.rag.ingestDocument({ documentId: body.documentId, scenarioId: scenario.id, sourceFile, text, collection: scenario.rag.collection, actor: user.name });
      // The new chunks are searchable now (exactly); the ingest job adds them to the scenario's index, off the
      // request. GET /api/rag/search-index shows its progress.
      if (!result.unchanged && ctx.jobs) await ctx.jobs.send(ingestScenarioDocumentsQueue, { scenarioId: scenario.id });
      return reply.status(201).send(result);
    },
  );

  app.delete<{ Params: { documentId: string } }>(
    '/api/rag/documents/:documentId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['rag'],
        summary: 'Delete a document and all its chunks (admin; audited). Scenario documents serve every project.',
        ...routeSchema('DELETE /api/rag/documents/:documentId'),
      },
    },
    async (request, reply) => {
      const user = requireUser(request);
      await refuseProjectDocument(request.params.documentId);
      if (!(await ctx.rag.deleteDocument(request.params.documentId, user.name))) {
        throw new ClinAgentError('NOT_FOUND', `Document "${request.params.documentId}" does not exist. List documents with GET /api/rag/documents.`, { documentId: request.params.documentId });
      }
      return reply.status(204).send();
    },
  );

  app.get<{ Querystring: { scenarioId: string } }>(
    '/api/rag/search-index',
    {
      schema: {
        tags: ['rag'],
        summary: "Where a scenario's search index stands: chunks, how many are indexed, and whether queries use the index yet. The background ingest job builds it; queries never wait for it.",
        ...routeSchema('GET /api/rag/search-index'),
      },
    },
    async (request) => {
      const scenario = ragScenario(request.query.scenarioId);
      return ctx.rag.indexStatus({ scenarioId: scenario.id, collection: scenario.rag.collection });
    },
  );
};
