import { and, eq, inArray, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../../../core/db/connect.js';
import { isUuid } from '../../../core/ids.js';
import type { RunTable } from '../run-shape.js';
import { DEFAULT_LEASE_MS, type RunStore } from './contract.js';
import type { StoreTable } from './store-table.js';

type LeaseMethods<Row> = Pick<RunStore<Row>, 'get' | 'acquireLease' | 'renewLease' | 'keepLease' | 'releaseLease' | 'acquireLeases' | 'keepLeases' | 'releaseLeases'>;

/** A lease is renewed every third of its length, so only a worker that died lets it lapse. */
const renewEvery = (leaseMs: number): number => Math.max(250, Math.floor(leaseMs / 3));

/**
 * The lease that gives one worker a run at a time: taken by one conditional UPDATE (pending, or running with no
 * live owner), renewed while a long step runs, given back without a step when the run cannot go on now.
 */
export function leases<T extends RunTable, Extra, DecisionExtra>({ t, hooks, asRow }: StoreTable<T, Extra, DecisionExtra>): LeaseMethods<T['$inferSelect']> {
  type Row = T['$inferSelect'];
  /** Pending, or running with no live owner: the runs a worker may take at `now`. */
  const takeable = (now: Date) => or(eq(t.status, 'PENDING'), and(eq(t.status, 'RUNNING'), or(isNull(t.leaseUntil), lt(t.leaseUntil, now))));

  async function renewLease(db: Db, id: string, owner: string, leaseMs = DEFAULT_LEASE_MS): Promise<boolean> {
    const now = new Date();
    const [row] = await db
      .update(t)
      .set({ leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
      .where(and(eq(t.id, id), eq(t.status, 'RUNNING'), eq(t.leaseOwner, owner)))
      .returning({ id: t.id });
    return Boolean(row);
  }

  return {
    async get(db, id) {
      if (!isUuid(id)) return undefined;
      const [row] = await db.select().from(t).where(and(eq(t.id, id), hooks.scope));
      return row && asRow(row);
    },
    /** The single conditional UPDATE is what makes two workers (or a retried job) never advance the same run at once. */
    async acquireLease(db, id, owner, leaseMs = DEFAULT_LEASE_MS, now = new Date()): Promise<Row | undefined> {
      const [row] = await db
        .update(t)
        .set({ status: 'RUNNING', leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
        .where(and(eq(t.id, id), hooks.scope, takeable(now)))
        .returning();
      return row && asRow(row);
    },
    renewLease,
    keepLease(db, id, owner, leaseMs = DEFAULT_LEASE_MS) {
      const timer = setInterval(() => void renewLease(db, id, owner, leaseMs).catch(() => undefined), renewEvery(leaseMs));
      timer.unref();
      return { stop: () => clearInterval(timer) };
    },
    /** Gives the run up without saving a step (the model is rate limited), so a retry can take it at once. */
    async releaseLease(db, id, owner) {
      await db.update(t).set({ leaseOwner: null, leaseUntil: null, updatedAt: new Date() }).where(and(eq(t.id, id), eq(t.leaseOwner, owner)));
    },
    /** acquireLease for many runs in one statement: the runs of `ids` this owner now holds. */
    async acquireLeases(db, ids, owner, leaseMs = DEFAULT_LEASE_MS, now = new Date()): Promise<Row[]> {
      const valid = ids.filter(isUuid);
      if (!valid.length) return [];
      const rows = await db
        .update(t)
        .set({ status: 'RUNNING', leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
        .where(and(inArray(t.id, valid), hooks.scope, takeable(now)))
        .returning();
      return rows.map(asRow);
    },
    /** keepLease for the runs `ids()` names at each renewal (a batch's runs still at work). */
    keepLeases(db, ids, owner, leaseMs = DEFAULT_LEASE_MS) {
      const renew = async () => {
        const current = ids();
        if (!current.length) return;
        const now = new Date();
        await db.update(t).set({ leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now }).where(and(inArray(t.id, [...current]), eq(t.status, 'RUNNING'), eq(t.leaseOwner, owner)));
      };
      const timer = setInterval(() => void renew().catch(() => undefined), renewEvery(leaseMs));
      timer.unref();
      return { stop: () => clearInterval(timer) };
    },
    async releaseLeases(db, ids, owner) {
      if (!ids.length) return;
      await db.update(t).set({ leaseOwner: null, leaseUntil: null, updatedAt: new Date() }).where(and(inArray(t.id, [...ids]), eq(t.leaseOwner, owner)));
    },
  };
}
