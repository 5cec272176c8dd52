import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { closeContext } from './context.js';
import { spans, traces } from './core/db/schema/trace.js';
import { buildTestContext } from './testing/test-context.js';
import { openTestDatabase, testEngines } from './testing/test-database.js';

// serve and worker call closeContext on SIGTERM: the trace spans still queued there must reach the database.
describe.each(testEngines())('closeContext on %s', (engine) => {
  it('writes the trace and spans still queued before it closes the database', async () => {
    const database = await openTestDatabase({ engine });
    try {
      const ctx = await buildTestContext({ database });
      const run = await ctx.trace.start({ kind: 'job', name: 'stopped-by-sigterm' });
      await run.span('tool', 'check_required_fields', { form: 'visit_2' }, async () => ({ missing: 2 }));
      expect(ctx.trace.stats.queued).toBeGreaterThan(0);

      await closeContext(ctx, { keepDatabase: true });

      const [trace] = await database.db.select().from(traces).where(eq(traces.id, run.traceId));
      expect(trace).toMatchObject({ name: 'stopped-by-sigterm', status: 'running' });
      expect(await database.db.select({ name: spans.name, output: spans.output }).from(spans).where(eq(spans.traceId, run.traceId))).toEqual([{ name: 'check_required_fields', output: { missing: 2 } }]);
    } finally {
      await database.close();
    }
  });
});
