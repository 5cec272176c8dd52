import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../core/paths.js';

/**
 * Serves the built web console (web/dist) with an SPA fallback. The bundle holds no data, so it is
 * public; everything it shows comes from /api routes that need a token.
 */
export async function registerConsole(app: FastifyInstance, distDir = path.join(packageRoot(), 'web', 'dist')): Promise<void> {
  const built = existsSync(path.join(distDir, 'index.html'));
  if (built) {
    await app.register(fastifyStatic, { root: distDir, prefix: '/', wildcard: false, index: ['index.html'] });
  }
  app.setNotFoundHandler((request, reply) => {
    if (request.url.startsWith('/api/') || request.method !== 'GET') {
      void reply.status(404).send({ code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}. See GET /api/openapi.json for the API.`, details: {} });
      return;
    }
    if (!built) {
      void reply
        .status(503)
        .type('text/html')
        .send('<h1>ClinAgent</h1><p>The web console is not built. Run <code>npm run build</code> (npm start does it for you), then reload.</p>');
      return;
    }
    void reply.sendFile('index.html');
  });
}
