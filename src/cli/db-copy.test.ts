import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAuditKey } from '../core/audit/load-audit-key.js';
import { loadConfig } from '../core/config.js';
import { openDatabase, queryRows, sql, type Db } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';
import { createThrowawayDatabase } from '../testing/test-database.js';
import { ensureDemoTrial } from '../trial/demo/load-demo-trial.js';
import { createTrialStore } from '../trial/store/trial-store.js';

afterAll(killRunningClis);

/** A data folder as the first start leaves it (migrated, the demo trial loaded, its key file beside it); `seed` adds to it. */
async function demoDataFolder(name: string, seed?: (db: Db) => Promise<void>): Promise<{ workDir: string; dataDir: string }> {
  const workDir = await mkdtemp(path.join(tmpdir(), `clinagent-${name}-`));
  const dataDir = path.join(workDir, 'data');
  const { key } = await loadAuditKey(loadConfig({ DATA_DIR: dataDir }).audit, { createIfMissing: true });
  const database = await openDatabase({ dataDir, auditKey: key });
  try {
    await runMigrations(database);
    await ensureDemoTrial(createTrialStore(database.db), 'system');
    await seed?.(database.db);
  } finally {
    await database.close();
  }
  return { workDir, dataDir };
}

describe('clinagent db copy arguments', () => {
  it('refuses a missing or non-PostgreSQL --to and an unknown subcommand with the usage', async () => {
    for (const [args, says] of [
      [['db', 'copy'], '--to is required'],
      [['db', 'copy', '--to', 'mysql://db/clinagent'], 'must be a postgres:// or postgresql:// URL'],
      [['db', 'copy', '--to', 'not a url'], 'is not a URL'],
      [['db', 'move', '--to', 'postgres://db/x'], 'Unknown arguments "move"'],
      [['db', 'copy', '--to', 'postgres://db/x', '--force'], "Unknown option '--force'"],
    ] as const) {
      const { code, stderr } = await runCli([...args]);
      expect(code, args.join(' ')).toBe(1);
      expect(stderr, args.join(' ')).toContain(says);
      expect(stderr, args.join(' ')).toContain('Usage: clinagent db copy --to <postgres url>');
    }
  });
});

/**
 * The command as an administrator runs it, from the embedded data folder (with its key file beside it) to a database
 * on the PostgreSQL server of TEST_DATABASE_URL: the target side needs a server, which is how CI runs. The copy itself
 * is proven on every run, PGlite to PGlite included, by src/core/db/copy/copy-database.test.ts.
 */
describe.each(process.env.TEST_DATABASE_URL ? [process.env.TEST_DATABASE_URL] : [])('clinagent db copy to PostgreSQL', (serverUrl) => {
  let workDir: string;
  let dataDir: string;
  let target: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    ({ workDir, dataDir } = await demoDataFolder('db-copy-cli'));
    target = await createThrowawayDatabase(serverUrl);
  }, 60_000);

  afterAll(async () => {
    await target?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('checks with --dry-run, copies, prints the counts and the audit chain, then refuses to copy into the copy', async () => {
    const dry = await runCli(['db', 'copy', '--to', target.url, '--dry-run'], { DATA_DIR: dataDir });
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('Dry run: the target is empty');
    expect(dry.stdout).toMatch(/trial_records\s+\d+/);

    const copy = await runCli(['db', 'copy', '--to', target.url], { DATA_DIR: dataDir }, 120_000);
    expect(copy.stderr).toBe('');
    expect(copy.code).toBe(0);
    expect(copy.stdout).toMatch(/audit chain OK \(\d+ entries, 1 project\)/);
    expect(copy.stdout).not.toContain('MISMATCH');
    expect(copy.stdout).toContain('Next: set DATABASE_URL=');

    const check = await openDatabase({ databaseUrl: target.url, poolSize: 1 });
    try {
      const [row] = await queryRows<{ n: number }>(check.db, sql`SELECT count(*)::int AS n FROM trial_records WHERE project_id = 'demo-htn-01'`);
      expect(row!.n).toBeGreaterThan(0);
    } finally {
      await check.close();
    }

    const again = await runCli(['db', 'copy', '--to', target.url], { DATA_DIR: dataDir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/CONFLICT_STATE: The target database is not empty: it already holds .*trial_records/);
  }, 180_000);
});

/**
 * Issue 32: `clinagent db copy --to postgres://...` refused with VECTOR_STORE_UNAVAILABLE for a trial that never used
 * retrieval, because the first start had embedded the demo protocol. On a server without pgvector (as the test
 * server is) the copy now moves everything else and says what it left and how to bring it back.
 */
describe.each(process.env.TEST_DATABASE_URL ? [process.env.TEST_DATABASE_URL] : [])('clinagent db copy to PostgreSQL without pgvector', (serverUrl) => {
  let workDir: string;
  let dataDir: string;
  let target: { url: string; drop(): Promise<void> };
  let hasPgvector: boolean;

  beforeAll(async () => {
    // What the first start leaves: the demo protocol embedded into its scenario's collection.
    ({ workDir, dataDir } = await demoDataFolder('db-copy-rag', async (db) => {
      await db.execute(sql`INSERT INTO rag_collections (name, embedding_model, dimension) VALUES ('protocols', 'local-hash', 3)`);
      await db.execute(sql`INSERT INTO rag_documents (id, scenario_id, collection, source_file, content_hash, chunk_count) VALUES ('doc_demo', 'protocol-qa', 'protocols', 'demo-protocol.md', 'h', 2)`);
      await db.execute(sql`INSERT INTO rag_chunks (document_id, chunk_index, scenario_id, collection, content, start_offset, end_offset, embedding) VALUES ('doc_demo', 0, 'protocol-qa', 'protocols', 'a', 0, 1, '[0.1,0.2,0.3]'), ('doc_demo', 1, 'protocol-qa', 'protocols', 'b', 1, 2, '[0.3,0.2,0.1]')`);
    }));
    target = await createThrowawayDatabase(serverUrl);
    const check = await openDatabase({ databaseUrl: target.url, poolSize: 1 });
    try {
      const [row] = await queryRows<{ yes: boolean }>(check.db, sql`SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS yes`);
      hasPgvector = row!.yes;
    } finally {
      await check.close();
    }
  }, 60_000);

  afterAll(async () => {
    await target?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('copies the trial, says it left the embeddings behind (tables and rows) and how to bring them back', async () => {
    const copy = await runCli(['db', 'copy', '--to', target.url], { DATA_DIR: dataDir }, 120_000);
    expect(copy.stderr).toBe('');
    expect(copy.code).toBe(0);
    expect(copy.stdout).toMatch(/audit chain OK/);
    if (hasPgvector) {
      expect(copy.stdout).not.toContain('Left behind');
      return;
    }
    expect(copy.stdout).toContain('Left behind: rag_collections (1 row), rag_documents (1 row), rag_chunks (2 rows)');
    expect(copy.stdout).toContain('protocol-qa: demo-protocol.md (document doc_demo, collection protocols)');
    expect(copy.stdout).toContain('clinagent ingest <scenarioId> <file>');
    expect(copy.stdout).toContain('Next: set DATABASE_URL=');
    const check = await openDatabase({ databaseUrl: target.url, poolSize: 1 });
    try {
      const [row] = await queryRows<{ n: number }>(check.db, sql`SELECT count(*)::int AS n FROM trial_records WHERE project_id = 'demo-htn-01'`);
      expect(row!.n).toBeGreaterThan(0);
    } finally {
      await check.close();
    }
  }, 180_000);
});
