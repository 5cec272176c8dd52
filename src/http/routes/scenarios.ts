import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { routeSchema } from '../../contract/index.js';
import { requireUser } from '../access.js';

export const scenarioRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/api/scenarios',
    {
      schema: {
        tags: ['agent'],
        summary: 'Scenarios this server runs, with their ingested documents, and the scenario files it could not load',
        ...routeSchema('GET /api/scenarios'),
      },
    },
    async (request) => {
      const user = requireUser(request);
      const documents = ctx.hasVectorStore ? await ctx.rag.listDocuments() : [];
      return {
        scenarios: ctx.scenarios.list().map((s) => ({
          id: s.id,
          name: s.name,
          description: s.description,
          rag: { enabled: s.rag.enabled, collection: s.rag.collection, topK: s.rag.topK },
          tools: s.tools,
          outputType: s.output.name,
          // The engine's kind and, for Dify, the app's mode and host (what the console describes it by); the
          // full URL and the key variable stay server-side.
          engine: s.engine.type === 'dify' ? { type: s.engine.type, appMode: s.engine.appMode, host: new URL(s.engine.baseUrl).host, inputNames: Object.keys(s.engine.inputs ?? {}) } : { type: s.engine.type },
          documents: documents.filter((d) => d.scenarioId === s.id),
        })),
        // Admins only, who fix scenario files: a problem may quote the file (a YAML error shows its line). The
        // file's name only: the folder is the server's business.
        invalid: user.role !== 'admin' ? [] : ctx.scenarios.invalid().map((f) => ({ file: path.basename(f.file), id: f.id ?? null, problems: f.problems })),
      };
    },
  );
};
