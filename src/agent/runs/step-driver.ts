import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { QueueDef } from '../../core/jobs/queues.js';
import type { Logger } from '../../core/logger.js';
import type { RunStatus, RunStep } from './run-shape.js';
import { DEFAULT_LEASE_MS, type Decision, type RunStore, type RunUpdate } from './run-store.js';

/** A bound on nodes per advance, so a graph with a loop that keeps failing cannot spin forever. */
export const DEFAULT_MAX_NODES_PER_ADVANCE = 100;

/** What executing one node produced: its step (the driver stamps node and time) and what it does to the run. */
export interface NodeResult<Extra = object> {
  step: Omit<RunStep, 'node' | 'at'>;
  update: RunUpdate & Extra;
}

/** The columns the driver reads of a run; every run table has them. */
interface DrivenRow {
  id: string;
  status: RunStatus;
  currentNode: string;
}

/**
 * What an agent (or the trial SOP) brings to the driver: how one node runs. Everything else (lease, heartbeat, the
 * checkpoint after every node, end nodes, the node cap, a lease given back on a rate limit) is the driver's.
 */
export interface NodeHandlers<Row, Extra, Session> {
  /** Per advance: a trace, a loaded definition; handed to every node of this advance. */
  begin?(run: Row): Promise<Session>;
  /**
   * Runs one node of a RUNNING run. A thrown LLM_RATE_LIMITED or LLM_TIMEOUT gives the lease back and fails the
   * job (pg-boss retries it); anything the node can route itself (an `on_error` edge) it returns as a result.
   */
  execute(run: Row, nodeId: string, session: Session): Promise<NodeResult<Extra>>;
  /** After the advance: the run as saved (undefined when the lease was lost), or the error it stopped on. */
  finish?(session: Session, run: Row | undefined, error?: unknown): Promise<void>;
  /** A run that has just suspended for a person (a notice to queue). */
  onSuspended?(run: Row): Promise<void>;
  /** Ids that end the run; default: those starting with `end`. */
  isEndNode?(nodeId: string): boolean;
  /** How an end node ends the run; default: `end_error` fails it, any other completes it. */
  endOf?(run: Row, nodeId: string): { status: RunStatus; error?: string };
}

export interface StepDriverOptions<Row, Extra, DecisionExtra, K extends string> {
  store: RunStore<Row, Extra, DecisionExtra>;
  db: Db;
  logger?: Logger;
  /** Identifies this process in run leases (each advance adds its own suffix); needed only to advance. */
  workerId?: string;
  leaseMs?: number;
  maxNodesPerAdvance?: number;
  /** The queue whose job advances one run, with the payload key naming it (`taskRunId`, `runId`). */
  queue: QueueDef<Record<K, string>>;
  key: K;
  /** Needed to queue continuations (decide) and to sweep orphans. */
  jobs?: Jobs;
  /** How runs are named in logs ("task run"). */
  label?: string;
}

/** Rate limits and timeouts pass with time: the job is retried rather than the run failed. */
export function isRetryableRunError(error: unknown): boolean {
  return ClinAgentError.isInstance(error) && (error.code === 'LLM_RATE_LIMITED' || error.code === 'LLM_TIMEOUT');
}

/** Names this process in run leases: host, pid and a random part (a restarted process is another owner). */
export function newRunWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export const defaultIsEndNode = (nodeId: string): boolean => nodeId.startsWith('end');

/**
 * The one step driver for durable runs (task runs, agent runs): advances a run from its saved node through the
 * user's node handler until it ends, suspends for a person or hits the node cap. Every node's result is committed
 * before the next node starts, so a run found at node N after a crash continues at N, never earlier, and a worker
 * whose lease was taken over stops without writing anything.
 */
export function createStepDriver<Row extends DrivenRow, Extra = object, DecisionExtra = object, K extends string = string>(options: StepDriverOptions<Row, Extra, DecisionExtra, K>) {
  const { store, db, logger } = options;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const maxNodes = options.maxNodesPerAdvance ?? DEFAULT_MAX_NODES_PER_ADVANCE;
  const label = options.label ?? 'run';

  /** Returns the run as saved, or undefined when it was not this advance's to run (another owner, not runnable). */
  async function advance<Session = undefined>(runId: string, handlers: NodeHandlers<Row, Extra, Session>): Promise<Row | undefined> {
    // One owner per advance, not per process: two jobs for the same run in one process must not both hold it.
    const owner = `${options.workerId ?? newRunWorkerId()}#${randomBytes(4).toString('hex')}`;
    const leased = await store.acquireLease(db, runId, owner, leaseMs);
    if (!leased) return undefined;
    const isEnd = handlers.isEndNode ?? defaultIsEndNode;
    // Renewed while a node runs (an LLM step can take minutes), so only a worker that died lets it lapse.
    const heartbeat = store.keepLease(db, runId, owner, leaseMs);
    let run: Row | undefined = leased;
    let session: Session | undefined;
    let hasBegun = false;

    const commit = async (current: Row, step: RunStep, update: RunUpdate & Extra): Promise<Row | undefined> => {
      const saved = await store.commitStep(db, current, owner, step, update, leaseMs);
      if (!saved) logger?.warn({ runId: current.id, node: step.node }, `lost the lease on a ${label}; leaving it to its new owner`);
      return saved;
    };

    try {
      session = (await handlers.begin?.(leased)) as Session;
      hasBegun = true;
      for (let i = 0; run?.status === 'RUNNING'; i++) {
        const at = new Date().toISOString();
        const nodeId = run.currentNode;
        if (i >= maxNodes) {
          run = await commit(run, { node: nodeId, type: 'limit', at, outcome: 'error' }, { nextNode: 'end_error', status: 'FAILED', error: `more than ${maxNodes} nodes in one pass: the graph loops` } as RunUpdate & Extra);
          break;
        }
        if (isEnd(nodeId)) {
          const end = handlers.endOf?.(run, nodeId) ?? (nodeId === 'end_error' ? { status: 'FAILED' as const, error: 'the run ended in end_error' } : { status: 'COMPLETED' as const });
          run = await commit(run, { node: nodeId, type: 'end', at, outcome: end.status === 'FAILED' ? 'error' : 'pass' }, { nextNode: nodeId, status: end.status, error: end.error } as RunUpdate & Extra);
          break;
        }
        let result: NodeResult<Extra>;
        try {
          result = await handlers.execute(run, nodeId, session as Session);
        } catch (error) {
          // Given back first, so the job's retry continues at once instead of waiting for the lease to lapse.
          if (isRetryableRunError(error)) await store.releaseLease(db, run.id, owner);
          throw error;
        }
        run = await commit(run, { node: nodeId, at, ...result.step }, result.update);
        if (run?.status === 'SUSPENDED') await handlers.onSuspended?.(run);
      }
      await handlers.finish?.(session as Session, run);
      return run;
    } catch (error) {
      if (hasBegun) await handlers.finish?.(session as Session, run, error);
      throw error;
    } finally {
      heartbeat.stop();
    }
  }

  function continuation(runId: string): Record<K, string> {
    return { [options.key]: runId } as Record<K, string>;
  }

  /**
   * Records a person's decision and queues the continuation, so the run goes on in whichever worker takes the
   * job. A decision refused because the data changed and the run redoes its work queues it too: the run is back
   * at work on the current data and needs its job.
   */
  async function decide(runId: string, decision: Decision & DecisionExtra): Promise<Row> {
    const jobs = requireJobs('decide');
    try {
      const run = await store.decide(db, runId, decision);
      await jobs.send(options.queue, continuation(runId));
      return run;
    } catch (error) {
      if (ClinAgentError.isInstance(error) && (error.details as { redo?: boolean } | undefined)?.redo) await jobs.send(options.queue, continuation(runId));
      throw error;
    }
  }

  /** Queues the first advance of a run just created. */
  async function enqueue(runId: string): Promise<void> {
    await requireJobs('enqueue').send(options.queue, continuation(runId));
  }

  /** One pass of the orphan sweep on this driver's queue. */
  async function sweep(staleMs: number): Promise<number> {
    const orphans = await store.sweepOrphans(db, { jobs: requireJobs('sweep'), queue: options.queue, key: options.key, staleMs });
    if (orphans.length) logger?.info({ count: orphans.length, queue: options.queue.name }, `re-enqueued ${label}s nobody was advancing`);
    return orphans.length;
  }

  /**
   * The orphan sweep on a timer, registered once per driver (a second call returns the first timer), plus one
   * pass at once so runs of a process that died before this one started move again without waiting.
   */
  let sweeper: { sweep(): Promise<number>; stop(): void } | undefined;
  async function startSweep(sweepOptions: { intervalMs: number; staleMs: number }): Promise<{ sweep(): Promise<number>; stop(): void }> {
    if (sweeper) return sweeper;
    const once = () => sweep(sweepOptions.staleMs);
    const timer = setInterval(() => void once().catch((error) => logger?.error({ err: errorMessage(error) }, `orphan sweep of ${label}s failed`)), sweepOptions.intervalMs);
    timer.unref();
    sweeper = { sweep: once, stop: () => clearInterval(timer) };
    await once();
    return sweeper;
  }

  function requireJobs(what: string): Jobs {
    if (!options.jobs) throw new ClinAgentError('INTERNAL', `The ${label} driver cannot ${what} without job queues; create the context with startJobs: true.`, { queue: options.queue.name });
    return options.jobs;
  }

  return { advance, decide, enqueue, sweep, startSweep, store };
}

export type StepDriver<Row extends DrivenRow, Extra = object, DecisionExtra = object, K extends string = string> = ReturnType<typeof createStepDriver<Row, Extra, DecisionExtra, K>>;
