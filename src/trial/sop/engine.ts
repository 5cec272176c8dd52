import type { AgentRegistry } from '../../runtime/definitions/index.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceRun, TraceStore } from '../../core/trace/store.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { RunReviewRequest } from '../../runtime/runs/run-shape.js';
import { createStepDriver, isRetryableRunError, type ModelOutagePolicy, type NodeResult } from '../../runtime/runs/step-driver.js';
import { advanceTaskRunBatchQueue, advanceTaskRunQueue } from '../qc/queues.js';
import type { ReviewRequest } from '../../core/db/schema/trial.js';
import { withoutIdentifierValues } from '../identifiers.js';
import { fieldValue } from '../rules/run-rules.js';
import { isNeedsHumanReview, runWithRetry } from '../soft/index.js';
import type { Finding } from './findings.js';
import { eventOf, loadRecordContext, loadRecordContexts, recordIdsByProject, type RecordContext } from './record-context.js';
import type { Skill } from './load-skills.js';
import type { ReviewNotifier } from './notify.js';
import type { SopNode } from './skill-schema.js';
import { readFingerprint, ruleReads, viewFingerprint } from './read-fingerprint.js';
import { hasHeldFindings } from './review-items.js';
import { getTaskRun, taskRunStore, type TaskRun, type TaskRunStepWrites } from './task-runs.js';

export interface SopDeps {
  db: Db;
  llm: LlmGateway;
  tools: ToolRegistry;
  trace: TraceStore;
  /** The registry the soft-rule judge is resolved from (the server's), so QC runs the judge GET /api/agents lists. */
  agents: Pick<AgentRegistry, 'get'>;
  notifier: ReviewNotifier;
  /** Queues the review notice of a suspended run (a job, so a slow webhook never holds a worker). */
  queueReviewNotice?: (taskRunId: string) => Promise<void>;
  logger: Logger;
  /** Identifies this process in run leases. */
  workerId: string;
  leaseMs?: number;
  /** The skill a run runs: the version it was created with, else the active one (stored skills, src/trial/skills). */
  skill(id: string, version?: number): Skill;
  /** How long a soft rule waits out a model outage before its record is reported not checked; the driver's default otherwise. */
  modelOutage?: ModelOutagePolicy;
}

type NodeOutcome =
  | { kind: 'checked'; passed: boolean; findings: Finding[]; ruleIds: string[]; detail: unknown }
  | { kind: 'needs_review'; reviewRequest: ReviewRequest; onApprove: string; onReject: string; detail: unknown };

type SopNodeResult = NodeResult<TaskRunStepWrites>;

/** A trial's review request is one shape of the store's open one (which reads only `dataHash` and `awaiting`). */
const asRunRequest = (request: ReviewRequest): RunReviewRequest => ({ ...request }) as RunReviewRequest;

/** The step driver over task runs for these deps: lease, heartbeat, checkpoints, end nodes and the node cap. */
export function taskRunDriver(deps: { db: Db; logger?: Logger; workerId?: string; leaseMs?: number; jobs?: Jobs; modelOutage?: ModelOutagePolicy }) {
  return createStepDriver({
    store: taskRunStore, db: deps.db, logger: deps.logger, workerId: deps.workerId, leaseMs: deps.leaseMs, queue: advanceTaskRunQueue, key: 'taskRunId', jobs: deps.jobs, label: 'task run', modelOutage: deps.modelOutage,
    batchQueue: { queue: advanceTaskRunBatchQueue as never, key: 'taskRunIds' },
  });
}

/**
 * Advances a run from its saved node until it ends or suspends (seed 000 section 4.3), on the one step driver:
 * what is trial-specific is only how each node type runs. Returns the run as saved, or undefined when another
 * worker owns it.
 */
export async function advanceTaskRun(deps: SopDeps, taskRunId: string): Promise<TaskRun | undefined> {
  return taskRunDriver(deps).advance<{ skill: Skill; trace: TraceRun }>(taskRunId, {
    async begin(run) {
      const skill = skillOf(deps, run);
      const trace = await deps.trace.start({ kind: 'sop', name: `${skill.id}:${run.recordId}`, projectId: run.projectId, input: { taskRunId, from: run.currentNode } });
      return { skill, trace };
    },
    execute: (run, nodeId, { skill, trace }) => executeNode(deps, skill, trace, run, nodeId, () => loadRecordContext(deps.db, run.projectId, run.recordId)),
    onSuspended: (run) => queueNotice(deps, run.id),
    endOf: (_run, nodeId) => (nodeId === 'end_error' ? { status: 'FAILED', error: 'the SOP ended in end_error' } : { status: 'COMPLETED' }),
    async finish({ trace }, run, error) {
      if (error) await trace.finish({ status: 'failed', error: errorMessage(error) });
      else await trace.finish({ status: run?.status === 'FAILED' ? 'failed' : 'success', output: run ? { status: run.status, node: run.currentNode } : { skipped: 'lease lost' } });
    },
  });
}

/**
 * Advances a batch of task runs together on the step driver's advanceMany: their records are read in one go and each
 * node's steps commit together, set-wise (batch-findings.ts). Hard rules, reviews and ends run in the batch; a
 * soft rule (a model call per record) hands its run back to be advanced on its own, as is a run whose record is gone.
 */
export async function advanceTaskRuns(deps: SopDeps, taskRunIds: readonly string[]): Promise<{ runs: TaskRun[]; handedBack: string[] }> {
  type Session = { records: Map<string, RecordContext>; skills: Map<string, Skill>; trace: TraceRun };
  return taskRunDriver(deps).advanceMany<Session>(taskRunIds, {
    async begin(runs) {
      const skills = new Map<string, Skill>();
      for (const run of runs) if (!skills.has(skillKey(run))) skills.set(skillKey(run), skillOf(deps, run));
      const records = new Map<string, RecordContext>();
      for (const [projectId, ids] of recordIdsByProject(runs)) for (const [recordId, record] of await loadRecordContexts(deps.db, projectId, ids)) records.set(`${projectId}\u0000${recordId}`, record);
      const trace = await deps.trace.start({ kind: 'sop', name: `${[...new Set(runs.map((run) => run.skillId))].join(',')}: batch of ${runs.length} records`, projectId: runs[0]!.projectId, input: { taskRunIds: runs.map((run) => run.id) } });
      return { records, skills, trace };
    },
    inBatch: (run, nodeId, { records, skills }) => records.has(`${run.projectId}\u0000${run.recordId}`) && skills.get(skillKey(run))?.nodes[nodeId]?.type !== 'soft_instruction',
    execute: (run, nodeId, { records, skills, trace }) => executeNode(deps, skills.get(skillKey(run))!, trace, run, nodeId, async () => records.get(`${run.projectId}\u0000${run.recordId}`)!),
    onSuspended: (run) => queueNotice(deps, run.id),
    endOf: (_run, nodeId) => (nodeId === 'end_error' ? { status: 'FAILED', error: 'the SOP ended in end_error' } : { status: 'COMPLETED' }),
    async finish({ trace }, runs, error) {
      if (error) await trace.finish({ status: 'failed', error: errorMessage(error) });
      else await trace.finish({ status: 'success', output: { ended: runs.length, failed: runs.filter((run) => run.status === 'FAILED').length, suspended: runs.filter((run) => run.status === 'SUSPENDED').length } });
    },
  });
}

/** A run keeps the skill version it was created with, so a version activated meanwhile applies to new runs only. */
function skillOf(deps: Pick<SopDeps, 'skill'>, run: TaskRun): Skill {
  return deps.skill(run.skillId, run.skillVersion ?? undefined);
}

const skillKey = (run: TaskRun) => `${run.skillId}\u0000${run.skillVersion ?? ''}`;

/** One node of a skill: its checks, or a suspension for a person; a failing check goes down `on_error`. */
async function executeNode(deps: SopDeps, skill: Skill, trace: TraceRun, run: TaskRun, nodeId: string, loadRecord: () => Promise<RecordContext>): Promise<SopNodeResult> {
  const node = skill.nodes[nodeId];
  if (!node) {
    return { step: { type: 'unknown', outcome: 'error' }, update: { nextNode: 'end_error', status: 'FAILED', error: `node "${nodeId}" is not in skill ${skill.id} (was the skill file changed while the run was suspended?)` } };
  }
  if (node.type === 'human_review') {
    // After findings, a review is about the queries held back for it; when every finding is already at the site or
    // was decided on the same values, there is nothing to review and the run goes on as approved (review-items.ts).
    if (run.steps.some((step) => step.outcome === 'fail') && !(await hasHeldFindings(deps.db, run))) {
      const next = node.on_approve;
      return { step: { type: node.type, outcome: 'nothing_to_review', next, detail: { reason: 'every finding is already at the site or was decided on the same values' } }, update: { nextNode: next, status: 'RUNNING' } };
    }
    const reviewRequest: ReviewRequest = { kind: 'review_node', node: nodeId, description: node.description, onRejectQueries: node.on_reject_queries };
    return { step: { type: node.type, outcome: 'suspended', next: 'review' }, update: { nextNode: nodeId, status: 'SUSPENDED', onApprove: node.on_approve, onReject: node.on_reject, reviewRequest: asRunRequest(reviewRequest) } };
  }
  const record = await loadRecord();
  let outcome: NodeOutcome;
  try {
    outcome = node.type === 'hard_rule' ? await checkHardRules(skill, nodeId, record) : await checkSoftRule(deps, trace, nodeId, node, record);
  } catch (error) {
    // A model outage is not a fact about the record: the driver waits it out and, if it lasts, reports the record
    // not checked. It never goes down on_error, which would file the check as done.
    if (isRetryableRunError(error)) throw error;
    const next = node.on_error ?? 'end_error';
    return { step: { type: node.type, outcome: 'error', next, detail: { error: errorMessage(error) } }, update: { nextNode: next, status: 'RUNNING' } };
  }
  if (outcome.kind === 'needs_review') {
    return { step: { type: node.type, outcome: 'suspended', next: 'review', detail: outcome.detail }, update: { nextNode: nodeId, status: 'SUSPENDED', onApprove: outcome.onApprove, onReject: outcome.onReject, reviewRequest: asRunRequest(outcome.reviewRequest) } };
  }
  const next = outcome.passed ? node.on_pass : node.on_fail;
  return { step: { type: node.type, outcome: outcome.passed ? 'pass' : 'fail', next, detail: outcome.detail }, update: { nextNode: next, status: 'RUNNING', findings: outcome.findings, checked: { ruleIds: outcome.ruleIds, skillRuleIds: skillRuleIds(skill) }, site: record.site } };
}

/**
 * Every rule of the node: violations become findings, and every rule it ran is named, so the queries of those that
 * did not fire are closed (closeNoLongerFiring). Evaluated in slices: QC shares the event loop with the HTTP
 * server, and hostile data must not stall it (issue 21).
 */
async function checkHardRules(skill: Skill, nodeId: string, record: RecordContext): Promise<NodeOutcome> {
  const compiled = skill.compiled[nodeId]!;
  const violations = await compiled.runInSlices(record.data);
  return {
    kind: 'checked',
    passed: violations.length === 0,
    findings: violations.map((v) => {
      const rule = compiled.rules.find((r) => r.id === v.ruleId);
      return { ...v, message: withoutIdentifierValues(v.message, record.identifierValues), eventName: eventOf(record, v.field), readFingerprint: readFingerprint(rule ? ruleReads(rule) : [v.field], record.data) };
    }),
    ruleIds: compiled.rules.map((r) => r.id),
    detail: { violations: violations.length, versions: record.versions },
  };
}

/**
 * A soft rule sees the record once, without identifier fields. A verdict becomes a finding like a hard rule's;
 * no usable verdict (model garbage, retries used up) is not a finding about the record: the run waits for a
 * person, who reads the technical reason and decides (approve = the record passes, reject = raise the query).
 */
async function checkSoftRule(deps: SopDeps, trace: Parameters<typeof runWithRetry>[0]['trace'], nodeId: string, node: Extract<SopNode, { type: 'soft_instruction' }>, record: RecordContext): Promise<NodeOutcome> {
  const result = await runWithRetry({ llm: deps.llm, tools: deps.tools, trace, agents: deps.agents }, node.instruction, record.modelView, { maxRetries: node.max_retries, tools: node.tools });
  const detail = { reason: result.reason, confidence: result.confidence, versions: record.versions };
  const eventName = eventOf(record, node.field);
  if (isNeedsHumanReview(result)) {
    return {
      kind: 'needs_review',
      onApprove: node.on_pass,
      onReject: node.on_fail,
      detail,
      reviewRequest: {
        kind: 'soft_rule_unresolved',
        node: nodeId,
        description: `The model could not judge this record (${node.description ?? node.instruction}). Check it yourself: approve if the record satisfies "${node.instruction}", reject to raise a query on ${node.field}.`,
        reason: result.reason,
        finding: { ruleId: nodeId, field: node.field, message: node.description ?? node.instruction, severity: node.severity },
      },
    };
  }
  return {
    kind: 'checked',
    passed: result.passed,
    findings: result.passed ? [] : [{ ruleId: nodeId, eventName, field: node.field, message: result.reason, severity: node.severity, value: fieldValue(record.data, node.field), readFingerprint: viewFingerprint(record.modelView) }],
    ruleIds: [nodeId],
    detail,
  };
}

/** The rules a skill has now: a hard rule by its id, a soft rule by its node's (as its findings are keyed). */
function skillRuleIds(skill: Skill): string[] {
  let ids = ruleIdsOf.get(skill);
  if (!ids) {
    ids = Object.entries(skill.nodes).flatMap(([id, node]) => (node.type === 'hard_rule' ? (skill.compiled[id]?.rules ?? []).map((r) => r.id) : node.type === 'soft_instruction' ? [id] : []));
    ruleIdsOf.set(skill, ids);
  }
  return ids;
}

/** Per loaded skill, which never changes once loaded (an edit loads a new one), so a batch computes it once. */
const ruleIdsOf = new WeakMap<Skill, string[]>();

async function queueNotice(deps: SopDeps, taskRunId: string): Promise<void> {
  if (!deps.notifier.configured || !deps.queueReviewNotice) return;
  // The run is saved as suspended whatever happens here; a notice that cannot be queued is logged, not fatal.
  await deps.queueReviewNotice(taskRunId).catch((error) => deps.logger.warn({ taskRunId, err: errorMessage(error) }, 'review notice could not be queued'));
}

/**
 * Records a reviewer's decision without queueing the continuation (reviewTaskRun in qc/workers.ts records it and
 * queues it, through the driver's decide).
 */
export async function resumeTaskRun(db: Db, taskRunId: string, decision: 'approve' | 'reject', reviewer: string, comment = '', shownDataHash?: string): Promise<TaskRun> {
  return taskRunStore.decide(db, taskRunId, await taskRunDecision(db, taskRunId, decision, reviewer, comment, shownDataHash));
}

/** A reviewer's approve or reject as the store takes it, with what a reject does to the queries the review holds. */
export async function taskRunDecision(db: Db, taskRunId: string, decision: 'approve' | 'reject', reviewer: string, comment = '', shownDataHash?: string) {
  if (decision !== 'approve' && decision !== 'reject') {
    throw new ClinAgentError('VALIDATION_FAILED', `decision must be "approve" or "reject", not "${String(decision)}".`, { field: 'decision' });
  }
  const current = await getTaskRun(db, taskRunId);
  return { kind: decision, actor: reviewer, comment, onRejectQueries: current?.reviewRequest?.onRejectQueries ?? 'cancel', shownDataHash };
}
