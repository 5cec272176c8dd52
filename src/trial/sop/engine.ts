import { randomBytes } from 'node:crypto';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceStore } from '../../core/trace/store.js';
import type { ReviewRequest } from '../../core/db/schema/trial.js';
import { fieldValue } from '../rules/run-rules.js';
import { isNeedsHumanReview, runWithRetry } from '../soft/index.js';
import type { ClearedCheck, Finding } from './findings.js';
import { loadRecordContext, type RecordContext } from './record-context.js';
import type { Skill } from './load-skills.js';
import type { ReviewNotifier } from './notify.js';
import { isEndNode } from './skill-graph.js';
import type { SopNode } from './skill-schema.js';
import { acquireLease, commitStep, decideReview, DEFAULT_LEASE_MS, getTaskRun, keepLease, releaseLease, type StepRecord, type TaskRun } from './task-runs.js';

export interface SopDeps {
  db: Db;
  llm: LlmGateway;
  tools: ToolRegistry;
  trace: TraceStore;
  notifier: ReviewNotifier;
  /** Queues the review notice of a suspended run (a job, so a slow webhook never holds a worker). */
  queueReviewNotice?: (taskRunId: string) => Promise<void>;
  logger: Logger;
  /** Identifies this process in run leases. */
  workerId: string;
  leaseMs?: number;
  skill(id: string): Skill;
}

/** A bound on nodes per advance, so a skill with a loop that keeps failing cannot spin forever. */
const MAX_NODES_PER_ADVANCE = 100;

type NodeOutcome =
  | { kind: 'checked'; passed: boolean; findings: Finding[]; cleared: ClearedCheck[]; detail: unknown }
  | { kind: 'needs_review'; reviewRequest: ReviewRequest; onApprove: string; onReject: string; detail: unknown };

/**
 * Advances a run from its saved node until it ends or suspends (seed 000 section 4.3). Every node's result
 * is saved before the next node starts; a run found at node N after a crash continues at N, never earlier.
 * Returns the run as saved, or undefined when another worker owns it.
 */
export async function advanceTaskRun(deps: SopDeps, taskRunId: string): Promise<TaskRun | undefined> {
  // One owner per advance, not per process: two jobs for the same run in one process must not both hold it.
  const owner = `${deps.workerId}#${randomBytes(4).toString('hex')}`;
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;
  const leased = await acquireLease(deps.db, taskRunId, owner, leaseMs);
  if (!leased) return undefined;
  let run: TaskRun | undefined = leased;
  const skill = deps.skill(leased.skillId);
  const trace = await deps.trace.start({ kind: 'sop', name: `${skill.id}:${leased.recordId}`, projectId: leased.projectId, input: { taskRunId, from: leased.currentNode } });
  // The lease is renewed while a step runs, so only a worker that died lets it lapse.
  const heartbeat = keepLease(deps.db, taskRunId, owner, leaseMs);
  try {
    for (let i = 0; run?.status === 'RUNNING'; i++) {
      const at = new Date().toISOString();
      const nodeId: string = run.currentNode;
      const stop = (type: string, error: string) =>
        commitOrStop(deps, owner, run!, { node: nodeId, type, at, outcome: 'error' }, { nextNode: 'end_error', status: 'FAILED', error });
      if (i >= MAX_NODES_PER_ADVANCE) {
        run = await stop('limit', `more than ${MAX_NODES_PER_ADVANCE} nodes in one pass: the skill loops`);
        break;
      }
      if (isEndNode(nodeId)) {
        const failed = nodeId === 'end_error';
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: 'end', at, outcome: failed ? 'error' : 'pass' }, { nextNode: nodeId, status: failed ? 'FAILED' : 'COMPLETED', error: failed ? 'the SOP ended in end_error' : undefined });
        break;
      }
      const node = skill.nodes[nodeId];
      if (!node) {
        run = await stop('unknown', `node "${nodeId}" is not in skill ${skill.id} (was the skill file changed while the run was suspended?)`);
        break;
      }
      if (node.type === 'human_review') {
        const reviewRequest: ReviewRequest = { kind: 'review_node', node: nodeId, description: node.description, onRejectQueries: node.on_reject_queries };
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: node.type, at, outcome: 'suspended', next: 'review' }, { nextNode: nodeId, status: 'SUSPENDED', onApprove: node.on_approve, onReject: node.on_reject, reviewRequest });
        if (run) await queueNotice(deps, run.id);
        break;
      }
      const record = await loadRecordContext(deps.db, run.projectId, run.recordId);
      let outcome: NodeOutcome;
      try {
        outcome = node.type === 'hard_rule' ? await checkHardRules(skill, nodeId, record) : await checkSoftRule(deps, trace, nodeId, node, record);
      } catch (error) {
        // Rate limits and timeouts are worth retrying as a job. Give the lease up first, so the job's retry
        // continues at once instead of waiting for the lease to lapse; anything else goes down on_error.
        if (ClinAgentError.isInstance(error) && (error.code === 'LLM_RATE_LIMITED' || error.code === 'LLM_TIMEOUT')) {
          await releaseLease(deps.db, run.id, owner);
          throw error;
        }
        const next = node.on_error ?? 'end_error';
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: node.type, at, outcome: 'error', next, detail: { error: errorMessage(error) } }, { nextNode: next, status: 'RUNNING' });
        continue;
      }
      if (outcome.kind === 'needs_review') {
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: node.type, at, outcome: 'suspended', next: 'review', detail: outcome.detail }, { nextNode: nodeId, status: 'SUSPENDED', onApprove: outcome.onApprove, onReject: outcome.onReject, reviewRequest: outcome.reviewRequest });
        if (run) await queueNotice(deps, run.id);
        break;
      }
      const next = outcome.passed ? node.on_pass : node.on_fail;
      run = await commitOrStop(deps, owner, run, { node: nodeId, type: node.type, at, outcome: outcome.passed ? 'pass' : 'fail', next, detail: outcome.detail }, { nextNode: next, status: 'RUNNING', findings: outcome.findings, cleared: outcome.cleared, site: record.site });
    }
    await trace.finish({ status: run?.status === 'FAILED' ? 'failed' : 'success', output: run ? { status: run.status, node: run.currentNode } : { skipped: 'lease lost' } });
    return run;
  } catch (error) {
    await trace.finish({ status: 'failed', error: errorMessage(error) });
    throw error;
  } finally {
    heartbeat.stop();
  }
}

/**
 * Every rule of the node: violations become findings, rules that passed clear their earlier findings. Evaluated
 * in slices: QC shares the event loop with the HTTP server, and hostile data must not stall it (issue 21).
 */
async function checkHardRules(skill: Skill, nodeId: string, record: RecordContext): Promise<NodeOutcome> {
  const compiled = skill.compiled[nodeId]!;
  const violations = await compiled.runInSlices(record.data);
  const fired = new Set(violations.map((v) => v.ruleId));
  return {
    kind: 'checked',
    passed: violations.length === 0,
    findings: violations.map((v) => ({ ...v, eventName: eventOf(record, v.field) })),
    cleared: compiled.rules.filter((r) => !fired.has(r.id)).map((r) => ({ ruleId: r.id, field: r.field, eventName: eventOf(record, r.field) })),
    detail: { violations: violations.length, versions: record.versions },
  };
}

/**
 * A soft rule sees the record once, without identifier fields. A verdict becomes a finding like a hard rule's;
 * no usable verdict (model garbage, retries used up) is not a finding about the record: the run waits for a
 * person, who reads the technical reason and decides (approve = the record passes, reject = raise the query).
 */
async function checkSoftRule(deps: SopDeps, trace: Parameters<typeof runWithRetry>[0]['trace'], nodeId: string, node: Extract<SopNode, { type: 'soft_instruction' }>, record: RecordContext): Promise<NodeOutcome> {
  const result = await runWithRetry({ llm: deps.llm, tools: deps.tools, trace }, node.instruction, record.modelView, { maxRetries: node.max_retries, tools: node.tools });
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
    findings: result.passed ? [] : [{ ruleId: nodeId, eventName, field: node.field, message: result.reason, severity: node.severity, value: fieldValue(record.data, node.field) }],
    cleared: result.passed ? [{ ruleId: nodeId, eventName, field: node.field }] : [],
    detail,
  };
}

/** The visit a field names (`v2_arm_1.visit_date` -> v2_arm_1); '' for a baseline field or a project without events. */
function eventOf(record: RecordContext, field: string): string {
  const prefix = field.split('.')[0]!;
  return record.events.includes(prefix) ? prefix : '';
}

/** Saves a step; undefined when another worker took the run over (our lease expired), which ends this pass. */
async function commitOrStop(deps: SopDeps, owner: string, run: TaskRun, step: StepRecord, update: Parameters<typeof commitStep>[4]): Promise<TaskRun | undefined> {
  const saved = await commitStep(deps.db, run, owner, step, update, deps.leaseMs);
  if (!saved) deps.logger.warn({ taskRunId: run.id, node: step.node }, 'lost the lease on a task run; leaving it to its new owner');
  return saved;
}

async function queueNotice(deps: SopDeps, taskRunId: string): Promise<void> {
  if (!deps.notifier.configured || !deps.queueReviewNotice) return;
  // The run is saved as suspended whatever happens here; a notice that cannot be queued is logged, not fatal.
  await deps.queueReviewNotice(taskRunId).catch((error) => deps.logger.warn({ taskRunId, err: errorMessage(error) }, 'review notice could not be queued'));
}

/** Records a reviewer's decision; the caller enqueues the continuation (see qc/workers.ts). */
export async function resumeTaskRun(db: Db, taskRunId: string, decision: 'approve' | 'reject', reviewer: string, comment = '', shownDataHash?: string): Promise<TaskRun> {
  if (decision !== 'approve' && decision !== 'reject') {
    throw new ClinAgentError('VALIDATION_FAILED', `decision must be "approve" or "reject", not "${String(decision)}".`, { field: 'decision' });
  }
  const current = await getTaskRun(db, taskRunId);
  return decideReview(db, taskRunId, decision, reviewer, comment, current?.reviewRequest?.onRejectQueries ?? 'cancel', shownDataHash);
}

export { getTaskRun };
