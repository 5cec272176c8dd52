import type { FastifyPluginAsync } from 'fastify';
import { routeSchema, type SampleSizeRequest } from '../../contract/index.js';
import { calculateSampleSize, type SampleSizeInput } from '../../agents/protocol/sample-size/index.js';

/**
 * Calculators a researcher (or the console's calculator page) calls directly. `self`: a pure computation that
 * reads and writes nothing, so a viewer may use it too.
 */
export const toolRoutes: FastifyPluginAsync = async (app) => {
  app.post<{ Body: SampleSizeRequest }>(
    '/api/tools/sample-size',
    {
      config: { access: 'self' },
      schema: {
        tags: ['tools'],
        summary: 'Sample size: two means, two proportions, one proportion or time to event (400 naming a bad field)',
        ...routeSchema('POST /api/tools/sample-size'),
      },
    },
    async (request) => calculateSampleSize(request.body as SampleSizeInput),
  );
};
