import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../../testing/test-context.js';
import { createTrialReadTools } from '../read-tools/read-tools.js';
import { createTrialStore } from '../store/trial-store.js';
import { ensureDemoProtocol } from './load-demo-protocol.js';
import { ensureDemoTrial } from './load-demo-trial.js';

// PGlite: protocol search needs pgvector, which CI's PostgreSQL lacks.
describe('the demo protocol', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('is searchable by the demo project\'s assistant from the first start, and not embedded again on the next', async () => {
    const first = await ensureDemoProtocol(ctx.rag);
    expect(first).toMatchObject({ unchanged: false });
    expect(first.chunks).toBeGreaterThan(0);
    expect(await ensureDemoProtocol(ctx.rag)).toMatchObject({ unchanged: true });

    const search = createTrialReadTools({ db: ctx.db, rag: ctx.rag, hasVectorStore: ctx.hasVectorStore }, { projectId: 'demo-htn-01' }).find((t) => t.name === 'search_protocol')!;
    const found = JSON.stringify(await search.run({ query: 'inclusion criteria age', top_k: 3 }));
    expect(found).toContain('DEMO-HTN-01-protocol.md');
  });
});
