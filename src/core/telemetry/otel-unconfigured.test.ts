import { registerHooks } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * Unconfigured, OpenTelemetry costs nothing: no module of its SDK is even loaded (context.ts imports the exporter
 * only when an endpoint is set). Every package resolution Node makes in this process is watched from here on, and
 * the application is imported only after that, so a static import of the SDK anywhere would be seen; a configured
 * context afterwards shows the watch sees the SDK when it is loaded.
 */
const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.includes('@opentelemetry/')) resolved.push(specifier);
    return next(specifier, context);
  },
});

// Module loading is per process, not per database: PGlite only.
describe('OpenTelemetry left unconfigured', () => {
  it('loads none of the OpenTelemetry SDK for a whole agent run, and loads it once an endpoint is set', async () => {
    const { closeContext } = await import('../../context.js');
    const { buildServer } = await import('../../http/server.js');
    const { startScriptedModel } = await import('../../testing/scripted-model.js');
    const { buildTestContext } = await import('../../testing/test-context.js');
    const model = await startScriptedModel([], { fallback: { reply: '{"summary": "ok", "completion_rate": 1, "issues": [], "action_items": []}' } });
    try {
      const unset = await buildTestContext({ engine: 'pglite', llmBaseUrl: model.baseURL });
      const app = await buildServer(unset, { serveConsole: false });
      const { token } = await unset.users.create({ name: 'otel-unset', role: 'coordinator' });
      const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: { authorization: `Bearer ${token}` }, payload: { scenarioId: 'data-completeness', input: 'Check consent dates' } });
      expect(response.statusCode, response.body).toBe(200);
      await app.close();
      await closeContext(unset);
      expect(unset.telemetry).toBeUndefined();
      expect(resolved).toEqual([]);

      // An endpoint nobody listens on: only the loading is looked at here (otel-traces.test.ts sends spans).
      const configured = await buildTestContext({ engine: 'pglite', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '500' } });
      await closeContext(configured);
      expect(configured.telemetry).toBeDefined();
      expect(resolved.some((specifier) => specifier.includes('@opentelemetry/sdk-trace'))).toBe(true);
    } finally {
      await model.close();
    }
  });
});
