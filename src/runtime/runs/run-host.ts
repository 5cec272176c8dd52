import { eq, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { defineQueue } from '../../core/jobs/queues.js';
import type { Logger } from '../../core/logger.js';
import type { TraceStore } from '../../core/trace/store.js';
import { createRunStore } from './run-store.js';
import { thisProcessLeasePrefix } from './step-driver.js';

/**
 * One job advances one agent run of any family: its first start, its continuation after a person's answer or
 * decision, a step waiting out a model outage, and its recovery after a worker died are the same job, idempotent
 * under the run's lease. The name is the one definition runs had, so their jobs queued before an upgrade still run.
 */
export const advanceAgentRunQueue = defineQueue('agent-advance-run', z.object({ runId: z.string().uuid() }), {
  retryLimit: 5,
  // Longer than the slowest step; a job of a dead worker is retried after this (the sweep is faster).
  expireInSeconds: 15 * 60,
});

/** What every service whose runs the host advances is given (definition runs, the consult's and staged agents' conversations). */
export interface HostedRunDeps {
  db: Db;
  /** The one host of durable agent runs: its queue advances these runs and its sweep recovers a step left by a dead process. */
  host: RunHost;
  trace: TraceStore;
  logger: Logger;
  /** Identifies this process in run leases. */
  workerId: string;
  leaseMs?: number;
}

/** A family of agent runs (`agent:`, `consult:`, `staged:`): its kind prefix, and how one of its runs advances. */
export interface RunFamily {
  /** The start of the kinds of its runs; ends with `:`, and no family's prefix starts another's. */
  prefix: string;
  /** How its runs are named in logs ("consult"). */
  label: string;
  /** Advances the run from its saved node (a job's work); resolves whether or not this worker got its lease. */
  advance(runId: string): Promise<unknown>;
}

/**
 * The agent runs of one family: kinds that start with its prefix. Not `LIKE 'prefix%'`: a prefix may hold "_", which
 * LIKE reads as any character, so `under_score:` would take the runs of an `underXscore:` family too.
 */
export const inFamily = (prefix: string): SQL => sql`starts_with(${agentRuns.kind}, ${prefix})`;

interface RunHostOptions {
  db: Db;
  jobs?: Jobs;
  logger: Logger;
}

interface RunHostWorkerOptions {
  concurrency: number;
  sweepIntervalMs: number;
  staleMs: number;
  /** The database only this process can open (embedded): other processes' leases are ended at start. */
  exclusiveDatabase?: boolean;
}

interface RunHostWorkers {
  /** One pass of the sweep over every family's runs: the number of runs queued again. */
  sweep(): Promise<number>;
  stop(): void;
}

/**
 * The one host of durable agent runs: every family shares one job queue and one orphan sweep over agent_runs, and a
 * job is routed to its family by the run's kind. So a process runs `concurrency` agent-run pollers and one sweep
 * timer whatever the number of agent kinds (three families used to bring three queues and three sweeps each).
 */
export function createRunHost(options: RunHostOptions) {
  const { db, logger } = options;
  const families = new Map<string, RunFamily>();
  /** This process's workers, once start began: a second start, even one made while the first is under way, gets them. */
  let workers: Promise<RunHostWorkers> | undefined;

  /** The store the sweep reads, over the runs of the families registered so far (rebuilt when one joins). */
  let sweepStore = storeOver([]);
  function storeOver(prefixes: string[]) {
    return createRunStore(agentRuns, {
      label: 'Agent run',
      idName: 'runId',
      // No family yet: a scope nothing matches, so the sweep never takes runs nobody here can advance.
      scope: prefixes.length ? or(...prefixes.map(inFamily)) : eq(agentRuns.kind, ''),
      audit: {
        entityType: 'agent_run',
        projectId: (run) => run.projectId ?? PLATFORM_AUDIT_SCOPE,
        actor: (run) => run.kind,
        // The sweep's only own event; steps, decisions and cancels are audited by each family's store.
        action: (event) => (event.type === 'recovered' ? 'recovered' : undefined),
      },
    });
  }

  function familyOf(kind: string): RunFamily | undefined {
    for (const [prefix, family] of families) if (kind.startsWith(prefix)) return family;
    return undefined;
  }

  function requireJobs(what: string): Jobs {
    if (!options.jobs) throw new ClinAgentError('INTERNAL', `Agent runs cannot ${what} without job queues; create the context with startJobs: true.`, { queue: advanceAgentRunQueue.name });
    return options.jobs;
  }

  /** The job's work: the run's family advances it; a run that is gone, or of a kind nobody here runs, is left. */
  async function advance(runId: string): Promise<void> {
    const [row] = await db.select({ kind: agentRuns.kind }).from(agentRuns).where(eq(agentRuns.id, runId));
    if (!row) return;
    const family = familyOf(row.kind);
    if (!family) {
      logger.warn({ runId, kind: row.kind }, 'agent run of a kind this process does not run; its job is dropped');
      return;
    }
    await family.advance(runId);
  }

  async function sweep(staleMs: number): Promise<number> {
    const orphans = await sweepStore.sweepOrphans(db, { jobs: requireJobs('be swept'), queue: advanceAgentRunQueue, key: 'runId', staleMs });
    if (orphans.length) logger.info({ count: orphans.length, queue: advanceAgentRunQueue.name }, 're-enqueued agent runs nobody was advancing');
    return orphans.length;
  }

  async function startWorkers(workerOptions: RunHostWorkerOptions): Promise<RunHostWorkers> {
    const jobs = requireJobs('be worked on');
    // The embedded database belongs to this process alone: a lease of any other owner is a dead process's.
    if (workerOptions.exclusiveDatabase) await sweepStore.endLeasesOfOthers(db, thisProcessLeasePrefix());
    for (let i = 0; i < workerOptions.concurrency; i++) await jobs.work(advanceAgentRunQueue, ({ runId }) => advance(runId), { batchSize: 1, pollingIntervalSeconds: 0.5 });
    const once = () => sweep(workerOptions.staleMs);
    const timer = setInterval(() => void once().catch((error) => logger.error({ err: errorMessage(error) }, 'orphan sweep of agent runs failed')), workerOptions.sweepIntervalMs);
    timer.unref();
    await once().catch((error) => {
      clearInterval(timer);
      throw error;
    });
    return { sweep: once, stop: () => clearInterval(timer) };
  }

  return {
    /** What every family's step driver sends its continuations to. */
    queue: advanceAgentRunQueue,
    key: 'runId' as const,
    jobs: options.jobs,
    /** Adds a family; its runs are advanced by the host's jobs and swept by its sweep from now on. */
    register(family: RunFamily): void {
      if (!/^[a-z][a-z0-9_-]*:$/.test(family.prefix)) throw new ClinAgentError('INTERNAL', `Agent-run family prefix "${family.prefix}" must be lowercase letters, digits, "-" or "_", ending with ":" (\`consult:\`).`);
      // With one ":" and only at the end, two prefixes overlap (one starts the other) only when they are the same.
      if (families.has(family.prefix)) {
        throw new ClinAgentError('INTERNAL', `Agent-run family "${family.prefix}" is registered already (as "${families.get(family.prefix)!.label}"): each family's service is created once per run host; reuse the one the context built.`);
      }
      families.set(family.prefix, family);
      sweepStore = storeOver([...families.keys()]);
    },
    /**
     * The store the sweep reads: agent_runs of every family registered so far (a family registered later is seen by
     * the store asked for after it). The RunStore conformance spec runs against it.
     */
    sweepStore: () => sweepStore,
    /** The families, by prefix (a test checks all three are here). */
    families: (): string[] => [...families.keys()],
    /** A job's work: the run's family advances it (exported for tests and one-off tools; workers call it). */
    advance,
    /** One pass of the sweep over every family's runs that nobody advances. */
    sweep,
    /**
     * This process's agent-run workers: `concurrency` pollers on the one queue and the one sweep timer, plus one
     * sweep at once so runs of a process that died before this one started move again without waiting. A second
     * call, even one made while the first is still starting, returns the first workers (not a second set of pollers
     * and a timer nobody could stop).
     */
    start(workerOptions: RunHostWorkerOptions): Promise<RunHostWorkers> {
      workers ??= startWorkers(workerOptions);
      return workers;
    },
  };
}

export type RunHost = ReturnType<typeof createRunHost>;
