import type { FastifyPluginAsync } from 'fastify';
import { ClinAgentError } from '../../core/errors.js';
import type { TraceStore } from '../../core/trace/store.js';
import { errorResponses } from '../schemas.js';

const span = {
  type: 'object',
  properties: {
    id: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, status: { type: 'string' }, input: {}, output: {}, error: { type: ['string', 'null'] },
    promptTokens: { type: 'integer' }, completionTokens: { type: 'integer' }, startedAt: { type: 'string' }, durationMs: { type: 'integer' },
  },
} as const;

const traceSummary = {
  id: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, status: { type: 'string' }, userId: { type: ['string', 'null'] }, error: { type: ['string', 'null'] },
  promptTokens: { type: 'integer' }, completionTokens: { type: 'integer' }, startedAt: { type: 'string' }, endedAt: { type: ['string', 'null'] }, durationMs: { type: ['integer', 'null'] },
} as const;

export const traceRoutes: FastifyPluginAsync<{ trace: TraceStore }> = async (app, { trace }) => {
  app.get<{ Querystring: { limit?: number } }>(
    '/api/traces',
    {
      schema: {
        tags: ['traces'],
        summary: 'Most recent traces first',
        querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 } } },
        response: { 200: { type: 'object', properties: { traces: { type: 'array', items: { type: 'object', properties: traceSummary } } } }, ...errorResponses },
      },
    },
    async (request) => ({ traces: await trace.list({ limit: request.query.limit }) }),
  );

  app.get<{ Params: { id: string } }>(
    '/api/traces/:id',
    {
      schema: {
        tags: ['traces'],
        summary: 'One trace: the run, its LLM calls, tool calls and retrievals with timing and token usage',
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        response: { 200: { type: 'object', properties: { ...traceSummary, input: {}, output: {}, spans: { type: 'array', items: span } } }, ...errorResponses },
      },
    },
    async (request) => {
      const found = await trace.get(request.params.id);
      if (!found) throw new ClinAgentError('NOT_FOUND', `Trace "${request.params.id}" does not exist. Trace ids come back as traceId in every agent result.`, { traceId: request.params.id });
      return found;
    },
  );
};
