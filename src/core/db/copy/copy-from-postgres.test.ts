import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoTrial } from '../../../trial/demo/load-demo-trial.js';
import { createTrialStore } from '../../../trial/store/trial-store.js';
import { buildTestContext } from '../../../testing/test-context.js';
import { openTestDatabase, TEST_AUDIT_KEY } from '../../../testing/test-database.js';
import { openDatabase, queryRows, sql, type Database, type Db } from '../connect.js';
import { copyDatabase } from './copy-database.js';

/** The source this run can offer: the PostgreSQL server when TEST_DATABASE_URL names one (as CI does), else PGlite. */
const SOURCE_ENGINE = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';
const rowsOf = (db: Db, query: string) => queryRows<Record<string, unknown>>(db, sql.raw(query));

/**
 * The other direction from copy-database.test.ts: a PostgreSQL installation copied into an embedded database (a
 * laptop copy for a monitor's visit, or a move back). The library takes any source; the reads a copy makes of the
 * source (one read-only snapshot, the catalogue, sequence positions, audit heads) run here on the server's driver.
 */
describe(`copyDatabase from ${SOURCE_ENGINE} into an empty PGlite`, () => {
  let source: Database;
  let target: Database;

  beforeAll(async () => {
    source = await openTestDatabase({ engine: SOURCE_ENGINE });
    const store = createTrialStore(source.db);
    await ensureDemoTrial(store, 'system');
    const ctx = await buildTestContext({ database: source, engine: SOURCE_ENGINE });
    const pi = await ctx.users.create({ name: 'copy-pi', role: 'pi' });
    await ctx.users.addMember('demo-htn-01', pi.user.id);
    await ctx.trace.close();
    target = await openDatabase({ auditKey: TEST_AUDIT_KEY });
  }, 120_000);

  afterAll(async () => {
    await target?.close();
    await source?.close();
  });

  it('copies every row and sequence, and verifies counts and the audit chain on the target', async () => {
    const report = await copyDatabase(source, target);
    expect(report.audit).toMatchObject({ ok: true, problems: [] });
    expect(report.ok).toBe(true);
    for (const t of report.tables) expect(t.target, t.table).toBe(t.source);
    for (const table of ['projects', 'project_members', 'trial_records', 'trial_fields', 'audit_log', 'users', 'api_tokens']) {
      expect(report.tables.find((t) => t.table === table)!.source, table).toBeGreaterThan(0);
    }
    const trail = "SELECT id::text AS id, project_id, action, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS at, new_value::text AS new_value, prev_hash, hash FROM audit_log ORDER BY id";
    expect(await rowsOf(target.db, trail)).toEqual(await rowsOf(source.db, trail));
    // The target carries on where the source's sequences stopped: the next audit entry follows the copied ones.
    const { max } = (await rowsOf(target.db, 'SELECT max(id)::int AS max FROM audit_log'))[0] as { max: number };
    await createTrialStore(target.db).importRecords('demo-htn-01', [{ recordId: 'S900', eventName: '', site: 'SITE-01', data: { record_id: 'S900' } }], { actor: 'after-copy' });
    const { added } = (await rowsOf(target.db, `SELECT count(*)::int AS added FROM audit_log WHERE id > ${max}`))[0] as { added: number };
    expect(added).toBeGreaterThan(0);
    expect((await rowsOf(target.db, "SELECT count(*)::int AS n FROM audit_log WHERE actor = 'after-copy'"))[0]).toEqual({ n: added });
  }, 60_000);
});
