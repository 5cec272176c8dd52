import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { routeSchema } from '../../contract/index.js';

export const scenarioRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/api/scenarios',
    {
      schema: {
        tags: ['agent'],
        summary: 'Scenarios this server runs, with their ingested documents',
        ...routeSchema('GET /api/scenarios'),
      },
    },
    async () => {
      const documents = ctx.hasVectorStore ? await ctx.rag.listDocuments() : [];
      return {
        scenarios: ctx.scenarios.list().map((s) => ({
          id: s.id,
          name: s.name,
          description: s.description,
          rag: { enabled: s.rag.enabled, collection: s.rag.collection, topK: s.rag.topK },
          tools: s.tools,
          outputType: s.output.name,
          // The engine's kind and, for Dify, the app's mode; its URL and key variable stay server-side.
          engine: s.engine.type === 'dify' ? { type: s.engine.type, appMode: s.engine.appMode } : { type: s.engine.type },
          documents: documents.filter((d) => d.scenarioId === s.id),
        })),
      };
    },
  );
};
