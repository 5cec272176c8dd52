import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { missingLlmSettings } from '../../core/llm/gateway.js';
import { VERSION } from '../../version.js';
import { routeSchema } from '../../contract/index.js';

export const healthRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/api/health',
    {
      config: { access: 'public' },
      schema: {
        tags: ['system'],
        summary: 'Liveness and configuration summary (no secrets); the only route that needs no token',
        ...routeSchema('GET /api/health'),
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
