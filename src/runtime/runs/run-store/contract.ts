import type { SQL } from 'drizzle-orm';
import type { AuditEntityType, AuditEntryInput } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/connect.js';
import type { Jobs } from '../../../core/jobs/boss.js';
import type { QueueDef } from '../../../core/jobs/queues.js';
import type { RunReviewRequest, RunStatus, RunStep } from '../run-shape.js';
import type { Orphan } from './orphans.js';
import { RUN_RECOVERY_DEFAULTS } from '../../../core/config.js';

/**
 * Default time a worker owns a run without renewing it (QC_LEASE_MS's default). The worker renews the lease every
 * third of it while a step runs (an LLM step can take minutes), so only a dead worker, or one whose event loop stalls
 * for two thirds of it, lets it lapse; with the orphan sweep (every 2 s) this puts a run left by a killed worker back
 * to work within 10 s (npm run test:chaos measures it).
 */
export const DEFAULT_LEASE_MS = RUN_RECOVERY_DEFAULTS.leaseMs;

/** What one committed step does to the run row. */
export interface RunUpdate {
  nextNode: string;
  status: RunStatus;
  /** Where a suspended run goes on approve (or, waiting for an answer, with the answer) and on reject. */
  onApprove?: string;
  onReject?: string;
  reviewRequest?: RunReviewRequest;
  error?: string;
}

export type Decision = (
  | { kind: 'approve' | 'reject'; actor: string; comment?: string }
  /**
   * The reply a run waits for: the person's text (`answer`), or a typed input its family's schema checks
   * (`input`, a consult's text and attachment), or both.
   */
  | { kind: 'answer'; actor: string; answer?: string; input?: unknown; comment?: string }
) & {
  /**
   * The `reviewRequest.dataHash` of the run as the person was shown it. When given, a decision on a run that has
   * since been re-done and asks again (about other data) is refused rather than applied to data nobody saw.
   */
  shownDataHash?: string;
};

/** A queue whose jobs each list runs to advance together (payload field `key` holds their ids). */
export interface BatchQueue {
  queue: QueueDef<never>;
  key: string;
}

/** One executed node of one run, as commitSteps saves it with others. */
export interface StepCommit<Row, Extra = object> {
  run: Row;
  step: RunStep;
  update: RunUpdate & Extra;
}

/** What happened to a run, for the audit hook to name. */
export type RunAuditEvent =
  | { type: 'step'; step: RunStep; status: RunStatus }
  | { type: 'decision'; kind: Decision['kind'] }
  | { type: 'recovered' }
  | { type: 'cancelled' };

export const isTerminalStatus = (status: RunStatus): boolean => status === 'COMPLETED' || status === 'FAILED' || status === 'CANCELLED';

/**
 * A step that leaves its run in this status gives up the lease: an ended run, one waiting for a person, and one put
 * back to PENDING (waiting out a model outage) are no one's until a decision or their next job takes them. One rule
 * for commitStep and commitSteps, which used to disagree on PENDING.
 */
export const releasesLease = (status: RunStatus): boolean => isTerminalStatus(status) || status === 'SUSPENDED' || status === 'PENDING';

/** Everything a user of the store adds; the store itself knows runs, leases and reviews, nothing of trials. */
export interface RunStoreHooks<Row, Extra, DecisionExtra> {
  /** How runs are named in messages: "Task run", "Consult". */
  label: string;
  /** The key naming the run in error details ("taskRunId"); default "runId". */
  idName?: string;
  /**
   * The user's own writes for a step (a trial's findings and queries), in the step's transaction after the run
   * row is locked. Returns audit entries, which the store writes last (the audit chain's lock comes last).
   */
  onCommit?(tx: Db, run: Row, step: RunStep, update: RunUpdate & Extra): Promise<AuditEntryInput[]>;
  /**
   * The same writes for the steps of many runs committed together (commitSteps), in as few statements as the
   * user can manage; absent: onCommit runs for each step in turn.
   */
  onCommitMany?(tx: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>): Promise<AuditEntryInput[]>;
  /** What a decision does besides moving the run on (a trial settles the queries its review held back). */
  onDecision?(tx: Db, run: Row, decision: Decision & DecisionExtra): Promise<AuditEntryInput[]>;
  /**
   * What a person waiting on this run is shown, as a string that changes whenever that data changes (a record's
   * versions). Its hash is saved when the run suspends; a decision made when it no longer matches is refused.
   */
  reviewFingerprint?(tx: Db, run: Row): Promise<string>;
  /** reviewFingerprint of many runs at once (by run id), for commitSteps; absent: one call per run. */
  reviewFingerprints?(tx: Db, runs: readonly Row[]): Promise<Map<string, string>>;
  /** Names the reviewed data in the refusal ("record S2"). */
  describeReviewedData?(run: Row): string;
  /**
   * The node to run again from when the data a person was asked about changed before their decision (a trial run
   * re-checks the record from its first node). Absent: the run keeps waiting, now for a decision on the new data.
   * A run that re-does its work never acts on what the person was shown: a finding that no longer holds is gone.
   */
  redoFrom?(run: Row): string | undefined;
  /** Audit of the run's own changes; absent: this table's runs are not audited. */
  audit?: {
    entityType: AuditEntityType;
    projectId(run: Row): string | null;
    actor(run: Row): string;
    /**
     * The action an event is audited as; undefined leaves the event out. Default: every saved node
     * (`node:<id>:<outcome>`), each status change by its name, `review_approved` / `review_rejected` / `answered`.
     */
    action?(event: RunAuditEvent): string | undefined;
  };
  /** The rows of a shared table this store sees (agent_runs of one kind): get, lease, decide and sweep only those. */
  scope?: SQL;
  /** Columns of the user's own saved with the step's run row (an agent's checkpoint `state`), by Drizzle name. */
  columns?(update: RunUpdate & Extra): Partial<Row>;
}

/** Options of one orphan sweep: where runs are queued again, and which runs count as nobody's. */
export interface SweepOptions<Q extends Record<K, string>, K extends keyof Q & string> {
  jobs: Jobs;
  queue: QueueDef<Q>;
  key: K;
  /** Where batches of runs wait, so a run listed in a waiting batch job is not taken for lost. */
  batch?: BatchQueue;
  staleMs: number;
  now?: Date;
  limit?: number;
}

/**
 * The durable run store's contract, whatever table it runs on (task_runs, agent_runs): the lease that gives one
 * worker a run at a time, the per-step checkpoint, suspension for a person, the decision that resumes it, cancel,
 * and the sweep that finds runs nobody advances. A run resumes from its saved node and never replays history.
 * src/testing/run-store-conformance.ts is its specification, run against every store on both database engines.
 */
export interface RunStore<Row, Extra = object, DecisionExtra = object> {
  get(db: Db, id: string): Promise<Row | undefined>;
  /** Takes a pending run, or a running one whose lease lapsed, for `owner`; undefined when it is not to be had. */
  acquireLease(db: Db, id: string, owner: string, leaseMs?: number, now?: Date): Promise<Row | undefined>;
  /** Extends the lease `owner` holds; false when the run is no longer its. */
  renewLease(db: Db, id: string, owner: string, leaseMs?: number): Promise<boolean>;
  /** Renews the lease every third of its length until stopped. */
  keepLease(db: Db, id: string, owner: string, leaseMs?: number): { stop(): void };
  releaseLease(db: Db, id: string, owner: string): Promise<void>;
  /** Saves one executed node if `owner` still holds the run at that node; undefined otherwise. */
  commitStep(db: Db, run: Row, owner: string, step: RunStep, update: RunUpdate & Extra, leaseMs?: number): Promise<Row | undefined>;
  acquireLeases(db: Db, ids: readonly string[], owner: string, leaseMs?: number, now?: Date): Promise<Row[]>;
  keepLeases(db: Db, ids: () => readonly string[], owner: string, leaseMs?: number): { stop(): void };
  releaseLeases(db: Db, ids: readonly string[], owner: string): Promise<void>;
  /** commitStep for many runs in one transaction; the rows saved. */
  commitSteps(db: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>, owner: string, leaseMs?: number): Promise<Row[]>;
  /** A person's decision on a suspended run; only one decision wins. */
  decide(db: Db, id: string, decision: Decision & DecisionExtra): Promise<Row>;
  /** Stops a run that has not ended; a run that has is refused. */
  cancel(db: Db, id: string, actor: string, reason?: string): Promise<Row>;
  /** One pass of the orphan sweep: the runs it queued again. */
  sweepOrphans<Q extends Record<K, string>, K extends keyof Q & string>(db: Db, options: SweepOptions<Q, K>): Promise<Orphan[]>;
  /** Runs nobody is advancing (see orphans.ts); `isQueued` says which ids already have a job waiting. */
  findOrphans(db: Db, options: { staleMs: number; isQueued(ids: string[]): Promise<Set<string>>; now?: Date; limit?: number }): Promise<Orphan[]>;
  /** Notes that runs are being picked up after their worker stopped; the next saved step clears it. */
  markRecovered(db: Db, ids: string[]): Promise<void>;
  /**
   * Ends at once the leases of every owner whose name does not start with `ownPrefix` (this process): for a database
   * only this process can open (the embedded one), whose other owners are processes that died. The ids whose lease ended.
   */
  endLeasesOfOthers(db: Db, ownPrefix: string): Promise<string[]>;
}
