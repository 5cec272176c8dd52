import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { errorResponses } from '../schemas.js';

export const scenarioRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/api/scenarios',
    {
      schema: {
        tags: ['agent'],
        summary: 'Scenarios this server runs, with their ingested documents',
        response: {
          200: {
            type: 'object',
            properties: {
              scenarios: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'string' },
                    name: { type: 'string' },
                    description: { type: 'string' },
                    rag: { type: 'object', properties: { enabled: { type: 'boolean' }, collection: { type: 'string' }, topK: { type: 'integer' } } },
                    tools: { type: 'array', items: { type: 'string' } },
                    outputType: { type: 'string' },
                    documents: { type: 'array', items: { type: 'object', properties: { documentId: { type: 'string' }, sourceFile: { type: 'string' }, chunkCount: { type: 'integer' } } } },
                  },
                },
              },
            },
          },
          ...errorResponses,
        },
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
          outputType: s.outputType.name,
          documents: documents.filter((d) => d.scenarioId === s.id),
        })),
      };
    },
  );
};
