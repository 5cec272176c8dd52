import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyElementsOdm, recordsOf, whileHealthPolled, textFieldDictionary as dictionaryOf } from '../../testing/large-imports.js';
import { buildTestContext } from '../../testing/test-context.js';
import { multipartBody, type MultipartFile } from '../../testing/multipart.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

// The "done when": the health check stays under a second during any import up to the upload limit; that
// figure is `npm run bench:import`'s. The server runs in this process, so the test measures what it depends on, the
// event loop's own delay, with room for a shared 2-core machine running other suites (1.4 s seen under such load):
// parsing on the loop again would hold it for many seconds.
const LOOP_DELAY_BOUND_MS = 3000;

describe.each(testEngines())('the server keeps answering during a large import on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let base: string;
  let member: { authorization: string };

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const { user, token } = await ctx.users.create({ name: 'dm-large', role: 'coordinator' });
    for (const id of ['large-odm', 'large-dictionary', 'large-upload']) {
      await ctx.users.createProject({ id, name: id });
      await ctx.users.addMember(id, user.id);
    }
    member = { authorization: `Bearer ${token}` };
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  /**
   * Sends the import over HTTP as the console does while a monitor asks GET /api/health every 100 ms, and
   * answers the import's response with the longest the event loop was held while it ran.
   */
  async function importWhilePolling(projectId: string, query: string, files: Record<string, MultipartFile>) {
    const upload = multipartBody({ files });
    const { result, longestLoopDelayMs, healthAnswers } = await whileHealthPolled(base, async () => {
      const response = await fetch(`${base}/api/iit/projects/${projectId}/imports${query}`, { method: 'POST', headers: { ...member, ...upload.headers }, body: upload.payload });
      return { status: response.status, body: await response.json() };
    });
    return { ...result, longestLoopDelayMs, healthAnswers };
  }

  it('keeps the event loop turning while previewing an ODM file of 1.25 million empty elements', async () => {
    const odm = emptyElementsOdm(1_250_000);
    expect(odm.length).toBeGreaterThan(5_000_000);

    const preview = await importWhilePolling('large-odm', '?preview=true', { odm: { name: 'empty-elements.odm.xml', content: odm, type: 'application/xml' } });

    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.healthAnswers).toBeGreaterThan(1);
    expect(preview.longestLoopDelayMs).toBeLessThan(LOOP_DELAY_BOUND_MS);
  }, 180_000);

  it('keeps the event loop turning while previewing a 10 000-field dictionary with 200 rows', async () => {
    const files = { dictionary: { name: 'wide-dictionary.csv', content: dictionaryOf(10_000) }, records: { name: 'wide-records.csv', content: recordsOf(10_000, 200, 3) } };

    const preview = await importWhilePolling('large-dictionary', '?preview=true', files);
    expect(preview.status, JSON.stringify(preview.body).slice(0, 2000)).toBe(200);
    expect(preview.body).toMatchObject({ importable: true, counts: { fields: 10_000, rows: 200 } });
    expect(preview.longestLoopDelayMs).toBeLessThan(LOOP_DELAY_BOUND_MS);
  }, 300_000);

  it('keeps the event loop turning while importing a records file of 50 MB, and while previewing it again', async () => {
    // Long values (free text, as notes fields hold) keep the cells few enough for a test's time.
    const fields = 100;
    const records = recordsOf(fields, 5_800, 89);
    expect(records.length).toBeGreaterThan(48 * 1024 * 1024);
    expect(records.length).toBeLessThanOrEqual(50 * 1024 * 1024);

    const imported = await importWhilePolling('large-upload', '', { dictionary: { name: 'dictionary.csv', content: dictionaryOf(fields) }, records: { name: 'records-50mb.csv', content: records } });

    expect(imported.status, JSON.stringify(imported.body).slice(0, 2000)).toBe(201);
    expect(imported.body).toMatchObject({ fields, records: { created: 5_800 } });
    expect(imported.longestLoopDelayMs).toBeLessThan(LOOP_DELAY_BOUND_MS);

    const again = await importWhilePolling('large-upload', '?preview=true', { dictionary: { name: 'dictionary.csv', content: dictionaryOf(fields) }, records: { name: 'records-50mb.csv', content: records } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ importable: true, counts: { records: { created: 0, unchanged: 5_800 } } });
    expect(again.longestLoopDelayMs).toBeLessThan(LOOP_DELAY_BOUND_MS);
  }, 600_000);
});
