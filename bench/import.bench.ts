import { pathToFileURL } from 'node:url';
import { buildServer } from '../src/http/server.js';
import { emptyElementsOdm, probeHealth, recordsOf, textFieldDictionary as dictionaryOf } from '../src/testing/large-imports.js';
import { buildTestContext } from '../src/testing/test-context.js';
import { multipartBody, type MultipartFile } from '../src/testing/multipart.js';
import { printTable, summarise } from './stats.js';

/**
 * Health-check latency during large imports (issue 32: "the health check stays under a second during a 50 MB
 * import"). A server on loopback, a probe asking GET /api/health on a fresh connection every 100 ms while one
 * import runs: an ODM preview of 1.25 million empty elements (5 MB), a preview of a 10 000-field dictionary with
 * 200 rows, and the import of a 50 MB records file. On in-memory PGlite, and on PostgreSQL when
 * BENCH_DATABASE_URL or TEST_DATABASE_URL is set.
 */
async function benchEngine(engine: 'pglite' | 'postgres'): Promise<Array<Record<string, string | number>>> {
  const ctx = await buildTestContext({ engine });
  const app = await buildServer(ctx, { serveConsole: false });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const { user, token } = await ctx.users.create({ name: 'bench-import', role: 'coordinator' });
  const auth = { authorization: `Bearer ${token}` };
  const rows: Array<Record<string, string | number>> = [];
  const run = async (label: string, projectId: string, query: string, files: Record<string, MultipartFile>) => {
    await ctx.users.createProject({ id: projectId, name: projectId });
    await ctx.users.addMember(projectId, user.id);
    const upload = multipartBody({ files });
    const latencies: number[] = [];
    let importing = true;
    const poll = (async () => {
      while (importing) {
        latencies.push((await probeHealth(base)).ms);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const started = performance.now();
    const response = await fetch(`${base}/api/iit/projects/${projectId}/imports${query}`, { method: 'POST', headers: { ...auth, ...upload.headers }, body: upload.payload });
    await response.arrayBuffer();
    const importMs = performance.now() - started;
    importing = false;
    await poll;
    const { p50, p99 } = summarise(latencies);
    rows.push({ engine, import: label, MB: Number((upload.payload.length / 1024 / 1024).toFixed(1)), status: response.status, 'import s': Number((importMs / 1000).toFixed(1)), 'health answers': latencies.length, 'p50 ms': Math.round(p50), 'p99 ms': Math.round(p99), 'max ms': Math.round(Math.max(...latencies)) });
  };
  try {
    await run('ODM preview, 1.25 M empty elements', 'bench-odm', '?preview=true', { odm: { name: 'empty.odm.xml', content: emptyElementsOdm(1_250_000), type: 'application/xml' } });
    await run('preview, 10 000 fields x 200 rows', 'bench-wide', '?preview=true', { dictionary: { name: 'dictionary.csv', content: dictionaryOf(10_000) }, records: { name: 'records.csv', content: recordsOf(10_000, 200, 3) } });
    await run('import, 50 MB records file', 'bench-50mb', '', { dictionary: { name: 'dictionary.csv', content: dictionaryOf(100) }, records: { name: 'records.csv', content: recordsOf(100, 5_800, 89) } });
  } finally {
    await app.close();
    await ctx.close();
  }
  return rows;
}

export async function main(): Promise<void> {
  const rows = await benchEngine('pglite');
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    process.env.TEST_DATABASE_URL = serverUrl;
    rows.push(...(await benchEngine('postgres')));
  }
  printTable('Health check latency during a large import (GET /api/health every 100 ms; the issue bounds it at 1 s)', rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
