import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { QueueDef } from '../../core/jobs/queues.js';
import type { Logger } from '../../core/logger.js';
import type { RunStatus, RunStep } from './run-shape.js';
import { DEFAULT_LEASE_MS, type Decision, type RunStore, type BatchQueue, type RunUpdate, type StepCommit } from './run-store.js';

/** A bound on nodes per advance, so a graph with a loop that keeps failing cannot spin forever. */
const DEFAULT_MAX_NODES_PER_ADVANCE = 100;

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
 * checkpoint after every node, end nodes, the node cap, waiting out a model outage) is the driver's.
 */
export interface NodeHandlers<Row, Extra, Session> {
  /** Per advance: a trace, a loaded definition; handed to every node of this advance. */
  begin?(run: Row): Promise<Session>;
  /**
   * Runs one node of a RUNNING run. A thrown model outage (LLM_RATE_LIMITED, LLM_TIMEOUT, LLM_UNAVAILABLE) is waited
   * out by the driver (ModelOutagePolicy; without job queues the lease is given back and the error rethrown);
   * anything the node can route itself (an `on_error` edge) it returns as a result.
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
  /**
   * The model stayed unavailable through the whole outage budget at this node: what the run becomes. Default: FAILED,
   * saying the model was unavailable. An agent whose run holds a person's answer keeps it (agent-run-service).
   */
  onModelUnavailable?(run: Row, nodeId: string, error: ClinAgentError, attempts: number): NodeResult<Extra>;
}

/**
 * How a batch of runs advances together (advanceMany): the same nodes, with a session for the whole batch and a say
 * in which nodes run in the batch. A node left out (one that calls a model, say) hands its run back to be advanced
 * on its own.
 */
export interface BatchNodeHandlers<Row, Extra, Session> extends Pick<NodeHandlers<Row, Extra, Session>, 'execute' | 'onSuspended' | 'isEndNode' | 'endOf'> {
  begin(runs: Row[]): Promise<Session>;
  /** Whether this node of this run executes in the batch. */
  inBatch(run: Row, nodeId: string, session: Session): boolean;
  finish?(session: Session, runs: Row[], error?: unknown): Promise<void>;
}

interface StepDriverOptions<Row, Extra, DecisionExtra, K extends string> {
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
  /** Where batches of runs wait (advanceMany's jobs), so the orphan sweep does not take a run waiting in one for lost. */
  batchQueue?: BatchQueue;
  /** Needed to queue continuations (decide) and to sweep orphans. */
  jobs?: Jobs;
  /** How runs are named in logs ("task run"). */
  label?: string;
  /** How long a run waits out a model outage at one node before it gives up; DEFAULT_MODEL_OUTAGE otherwise. */
  modelOutage?: ModelOutagePolicy;
}

/**
 * A model outage (rate limited, timed out, unreachable, failing) is waited out per run, not retried at once: each
 * failed attempt is a saved step, the run goes back to PENDING and its next attempt is a job that starts later, so
 * an outage costs a run `attempts` model calls (each with the client's own retries), not one every second. After
 * the last attempt the run ends saying plainly that the model was unavailable.
 */
export interface ModelOutagePolicy {
  /** Attempts at one node, the first included. */
  attempts: number;
  /** Wait before the second attempt; doubled for each further one. A longer retry-after from the endpoint wins. */
  firstDelayMs: number;
}

/**
 * Three attempts over about ten seconds (now, after 3 s, after 6 s more), each with the client's own retries: a
 * blip passes, an outage is reported while someone still waits for the run, and a run costs at most three times
 * the client's calls, never one call a second for as long as the outage lasts.
 */
const DEFAULT_MODEL_OUTAGE: ModelOutagePolicy = { attempts: 3, firstDelayMs: 3_000 };

/** The step type of an attempt that found the model unavailable; the run's steps count them. */
export const MODEL_UNAVAILABLE_STEP = 'model_unavailable';

/**
 * Rate limits, timeouts and an unreachable or failing model pass with time: the run waits the outage out (or, without
 * job queues, the job is retried) rather than failing, and a check it could not make is never recorded as made.
 */
export function isRetryableRunError(error: unknown): boolean {
  return ClinAgentError.isInstance(error) && (error.code === 'LLM_RATE_LIMITED' || error.code === 'LLM_TIMEOUT' || error.code === 'LLM_UNAVAILABLE');
}

/** Attempts that found the model unavailable at `nodeId` since the run last got past it. */
function outageAttempts(run: { steps?: unknown }, nodeId: string): number {
  const steps = Array.isArray(run.steps) ? (run.steps as RunStep[]) : [];
  let count = 0;
  for (let i = steps.length - 1; i >= 0 && steps[i]!.node === nodeId && steps[i]!.type === MODEL_UNAVAILABLE_STEP; i--) count++;
  return count;
}

function retryAfterMsOf(error: ClinAgentError): number {
  const value = (error.details as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** How every lease owner of this process starts: host and pid. */
export const thisProcessLeasePrefix = (): string => `${hostname()}:${process.pid}:`;

/** Names this process in run leases: host, pid and a random part (a restarted process is another owner). */
export function newRunWorkerId(): string {
  return `${thisProcessLeasePrefix()}${randomBytes(3).toString('hex')}`;
}

const defaultIsEndNode = (nodeId: string): boolean => nodeId.startsWith('end');

/**
 * A batch lets the event loop turn between its phases and every so many runs. On the embedded database every query
 * runs on this thread and resolves without a turn of the loop, so a batch awaited end to end would hold the HTTP
 * server (a health check, a reviewer's click) for the whole batch.
 */
const RUNS_BETWEEN_TURNS = 25;


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
  const outage = options.modelOutage ?? DEFAULT_MODEL_OUTAGE;

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
        const nodeId: string = run.currentNode;
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
          if (isRetryableRunError(error) && options.jobs) {
            run = await waitOutOutage(run, nodeId, error as ClinAgentError, at, handlers, commit);
            continue;
          }
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

  /**
   * Advances many runs together, node by node: every run of the batch executes its current node, then all those
   * steps commit in one transaction (store.commitSteps), and the runs still running go on to their next node. So
   * each step is saved before its run's next node starts, as with `advance`, in a fixed number of statements per
   * node whatever the batch's size. Runs at a node the handlers keep out of the batch are given back and queued
   * one by one. Returns the runs that ended or suspended, as saved, and the ids handed back.
   */
  async function advanceMany<Session>(runIds: readonly string[], handlers: BatchNodeHandlers<Row, Extra, Session>): Promise<{ runs: Row[]; handedBack: string[] }> {
    const owner = `${options.workerId ?? newRunWorkerId()}#${randomBytes(4).toString('hex')}`;
    const leased = await store.acquireLeases(db, runIds, owner, leaseMs);
    if (!leased.length) return { runs: [], handedBack: [] };
    const isEnd = handlers.isEndNode ?? defaultIsEndNode;
    let active: Row[] = leased;
    const heartbeat = store.keepLeases(db, () => active.map((run) => run.id), owner, leaseMs);
    const ended: Row[] = [];
    const handedBack: string[] = [];
    let session: Session | undefined;
    let hasBegun = false;
    try {
      await yieldToEventLoop();
      session = await handlers.begin(leased);
      hasBegun = true;
      for (let round = 0; active.length; round++) {
        const steps: Array<StepCommit<Row, Extra>> = [];
        for (const [index, run] of active.entries()) {
          if (index % RUNS_BETWEEN_TURNS === 0) await yieldToEventLoop();
          const at = new Date().toISOString();
          const nodeId = run.currentNode;
          if (round >= maxNodes) {
            steps.push({ run, step: { node: nodeId, type: 'limit', at, outcome: 'error' }, update: { nextNode: 'end_error', status: 'FAILED', error: `more than ${maxNodes} nodes in one pass: the graph loops` } as RunUpdate & Extra });
          } else if (isEnd(nodeId)) {
            const end = handlers.endOf?.(run, nodeId) ?? (nodeId === 'end_error' ? { status: 'FAILED' as const, error: 'the run ended in end_error' } : { status: 'COMPLETED' as const });
            steps.push({ run, step: { node: nodeId, type: 'end', at, outcome: end.status === 'FAILED' ? 'error' : 'pass' }, update: { nextNode: nodeId, status: end.status, error: end.error } as RunUpdate & Extra });
          } else if (!handlers.inBatch(run, nodeId, session)) {
            handedBack.push(run.id);
          } else {
            const result = await handlers.execute(run, nodeId, session);
            steps.push({ run, step: { node: nodeId, at, ...result.step }, update: result.update });
          }
        }
        await yieldToEventLoop();
        const saved = await store.commitSteps(db, steps, owner, leaseMs);
        if (saved.length < steps.length) logger?.warn({ lost: steps.length - saved.length }, `lost the lease on ${steps.length - saved.length} ${label}s of a batch; leaving them to their new owners`);
        for (const run of saved) if (run.status === 'SUSPENDED') await handlers.onSuspended?.(run);
        ended.push(...saved.filter((run) => run.status !== 'RUNNING'));
        active = saved.filter((run) => run.status === 'RUNNING');
      }
      if (handedBack.length) {
        await store.releaseLeases(db, handedBack, owner);
        if (options.jobs) await options.jobs.sendMany(options.queue, handedBack.map(continuation));
      }
      await handlers.finish?.(session, ended);
      return { runs: ended, handedBack };
    } catch (error) {
      // Given back at once, so the job's retry can take the batch again instead of waiting for the leases to lapse.
      await store.releaseLeases(db, [...active.map((run) => run.id), ...handedBack], owner).catch(() => undefined);
      if (hasBegun) await handlers.finish?.(session as Session, ended, error);
      throw error;
    } finally {
      heartbeat.stop();
    }
  }

  /**
   * One attempt found the model unavailable: saved as a step, and the run goes back to PENDING with its next attempt
   * queued for later, or, once the budget is spent, ends the way its agent says (FAILED by default). Either way the
   * run's error says so in words a person can act on.
   */
  async function waitOutOutage<Session>(run: Row, nodeId: string, error: ClinAgentError, at: string, handlers: NodeHandlers<Row, Extra, Session>, commit: (current: Row, step: RunStep, update: RunUpdate & Extra) => Promise<Row | undefined>): Promise<Row | undefined> {
    const attempt = outageAttempts(run as { steps?: unknown }, nodeId) + 1;
    logger?.warn({ runId: run.id, node: nodeId, code: error.code, attempt, of: outage.attempts }, `the model was unavailable for a ${label}`);
    if (attempt < outage.attempts) {
      const delayMs = Math.max(outage.firstDelayMs * 2 ** (attempt - 1), retryAfterMsOf(error));
      const waiting = `Waiting for the model, which was unavailable (attempt ${attempt} of ${outage.attempts}; the next in about ${Math.ceil(delayMs / 1000)} s): ${error.message}`;
      const saved = await commit(run, { node: nodeId, type: MODEL_UNAVAILABLE_STEP, at, outcome: 'error', detail: { code: error.code, attempt, retryInMs: delayMs } }, { nextNode: nodeId, status: 'PENDING', error: waiting } as RunUpdate & Extra);
      if (saved) await options.jobs!.send(options.queue, continuation(run.id), { startAfter: new Date(Date.now() + delayMs) });
      return saved;
    }
    const ended = handlers.onModelUnavailable?.(run, nodeId, error, attempt) ?? {
      step: { type: MODEL_UNAVAILABLE_STEP, outcome: 'error', next: 'end_error', detail: { code: error.code, attempt } },
      update: { nextNode: 'end_error', status: 'FAILED', error: `Not done: the model was unavailable on all ${attempt} attempts (${error.message}). Run it again once the model is back.` } as RunUpdate & Extra,
    };
    return commit(run, { node: nodeId, at, ...ended.step }, ended.update);
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
    const orphans = await store.sweepOrphans(db, { jobs: requireJobs('sweep'), queue: options.queue, key: options.key, batch: options.batchQueue, staleMs });
    if (orphans.length) logger?.info({ count: orphans.length, queue: options.queue.name }, `re-enqueued ${label}s nobody was advancing`);
    return orphans.length;
  }

  /**
   * The orphan sweep on a timer, registered once per driver (a second call returns the first timer), plus one
   * pass at once so runs of a process that died before this one started move again without waiting.
   */
  let sweeper: { sweep(): Promise<number>; stop(): void } | undefined;
  async function startSweep(sweepOptions: { intervalMs: number; staleMs: number; exclusiveDatabase?: boolean }): Promise<{ sweep(): Promise<number>; stop(): void }> {
    if (sweeper) return sweeper;
    // The embedded database belongs to this process alone: a lease of any other owner is a dead process's.
    if (sweepOptions.exclusiveDatabase) await store.endLeasesOfOthers(db, thisProcessLeasePrefix());
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

  return { advance, advanceMany, decide, enqueue, sweep, startSweep, store };
}

export type StepDriver<Row extends DrivenRow, Extra = object, DecisionExtra = object, K extends string = string> = ReturnType<typeof createStepDriver<Row, Extra, DecisionExtra, K>>;
