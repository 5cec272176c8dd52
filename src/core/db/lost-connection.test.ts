import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database } from './connect.js';
import { createThrowawayDatabase } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';

/**
 * PostgreSQL restarted (or an administrator ended a session) while a connection was checked out of the pool, as a
 * transaction holds one: the process must survive it. Found by the chaos test (issue 35): the server and both workers
 * died with an unhandled 'error' event of a pg Client when PostgreSQL restarted mid-batch, because pg-pool listens for
 * errors on idle connections only.
 */
describe.runIf(process.env.TEST_DATABASE_URL)('a pooled connection PostgreSQL ends while it is checked out (PostgreSQL)', () => {
  let throwaway: { url: string; drop(): Promise<void> };
  let database: Database;

  beforeAll(async () => {
    throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!);
    database = await openDatabase({ databaseUrl: throwaway.url, poolSize: 2 });
  });
  afterAll(async () => {
    await database?.close();
    await throwaway?.drop();
  });

  it('fails what ran on it, keeps the process alive, and the pool serves the next query on a new connection', async () => {
    const client = await database.pool!.connect();
    expect(client.listenerCount('error'), 'an error listener on the checked-out connection').toBeGreaterThan(0);
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const admin = new pg.Client({ connectionString: throwaway.url });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    await waitFor(async () => client.query('select 1').then(() => false, () => true), 'the checked-out connection to fail', 10_000, 50);
    client.release(true);
    expect(await queryRows<{ one: number }>(database.db, sql`select 1 as one`)).toEqual([{ one: 1 }]);
  });
});
