import type { Db } from '../../../core/db/connect.js';
import type { RunRow, RunTable } from '../run-shape.js';
import type { RunStore, SweepOptions } from './contract.js';
import { claimOrphans, endLeasesOfOthers, findOrphans, markRecovered, type Orphan } from './orphans.js';
import type { StoreTable } from './store-table.js';

/** pg-boss fetches higher priorities first; every other job of the run queues has the default, 0. */
const RECOVERY_PRIORITY = 10;

type SweepMethods<Row> = Pick<RunStore<Row>, 'sweepOrphans' | 'findOrphans' | 'markRecovered' | 'endLeasesOfOthers'>;

/**
 * The orphan sweep: finds runs nobody is advancing (see orphans.ts), notes the ones whose worker died, and queues a
 * job for each on the sweep's queue (payload `{ [key]: runId }`).
 */
export function sweepOf<T extends RunTable, Extra, DecisionExtra>({ t, hooks, asRow, auditOf }: StoreTable<T, Extra, DecisionExtra>): SweepMethods<T['$inferSelect']> {
  const recoveredAudit = (run: RunRow) => auditOf(asRow(run), { type: 'recovered' }, {
    actor: 'system', oldValue: { leaseOwner: run.leaseOwner }, reason: 'its worker stopped before saving the next step; resuming from the last saved node',
  });
  const recovered = (db: Db, ids: string[]) => markRecovered(db, t, ids, recoveredAudit);

  return {
    async sweepOrphans<Q extends Record<K, string>, K extends keyof Q & string>(db: Db, options: SweepOptions<Q, K>): Promise<Orphan[]> {
      const { jobs, queue, key } = options;
      const isQueued = async (ids: string[]) => {
        const queued = await jobs.isQueued(queue, key, ids);
        if (!options.batch) return queued;
        const rest = ids.filter((id) => !queued.has(id));
        for (const id of await jobs.isQueuedInList(options.batch.queue, options.batch.key, rest)) queued.add(id);
        return queued;
      };
      const found = await findOrphans(db, t, { ...options, scope: hooks.scope, isQueued });
      // Two processes sweeping at once both find a run; only the one whose claim stamps it queues its job
      // (run-host-races.test.ts). No singleton slot: keyed by run for a minute, a run stranded again within the
      // minute (its job fetched by a process killed before it ran it) got no new job and waited for the next minute.
      const claimed = await claimOrphans(db, t, found.map((o) => o.id), { staleMs: options.staleMs, now: options.now, scope: hooks.scope });
      const orphans = found.filter((o) => claimed.has(o.id));
      // Runs whose worker died mid-step: the console says they are resuming, rather than sitting at 197/200.
      await recovered(db, orphans.filter((o) => o.abandoned).map((o) => o.id));
      // Ahead of the queue's backlog (a batch's runs handed back at a model node, hundreds deep): a run a dead process
      // left resumes within seconds of a live one seeing it, not after every job queued before it.
      await jobs.sendMany(queue, orphans.map(({ id }) => ({ [key]: id }) as Q), { priority: RECOVERY_PRIORITY });
      return orphans;
    },
    findOrphans: (db, options) => findOrphans(db, t, { ...options, scope: hooks.scope }),
    markRecovered: recovered,
    endLeasesOfOthers: (db, ownPrefix) => endLeasesOfOthers(db, t, ownPrefix, hooks.scope),
  };
}
