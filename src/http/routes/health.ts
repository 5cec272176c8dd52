import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { missingLlmSettings } from '../../core/llm/gateway.js';
import { VERSION } from '../../version.js';

export const healthRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/api/health',
    {
      config: { access: 'public' },
      schema: {
        tags: ['system'],
        summary: 'Liveness and configuration summary (no secrets); the only route that needs no token',
        response: {
          200: {
            type: 'object',
            properties: {
              status: { type: 'string' },
              version: { type: 'string' },
              database: { type: 'string', enum: ['pglite', 'postgres'] },
              vectorStore: { type: 'boolean' },
              llm: { type: 'object', properties: { configured: { type: 'boolean' }, model: { type: 'string' }, missing: { type: 'array', items: { type: 'string' } } } },
              embedding: { type: 'object', properties: { model: { type: 'string' }, local: { type: 'boolean' } } },
            },
          },
        },
      },
    },
    async () => ({
      status: 'ok',
      version: VERSION,
      database: ctx.database.engine,
      vectorStore: ctx.hasVectorStore,
      llm: { configured: ctx.llm.isConfigured, model: ctx.llm.modelName, missing: missingLlmSettings(ctx.config.llm) },
      embedding: { model: ctx.embedder.model, local: !ctx.config.embedding.model },
    }),
  );
};
