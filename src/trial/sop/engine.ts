import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { pendingActions } from '../../core/db/schema/trial.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceStore } from '../../core/trace/store.js';
import { runWithRetry } from '../soft/index.js';
import { loadRecordContext } from './record-context.js';
import type { Skill } from './load-skills.js';
import type { ReviewNotifier } from './notify.js';
import { isEndNode } from './skill-graph.js';
import { acquireLease, commitStep, decideReview, getTaskRun, type NewQuery, type StepRecord, type TaskRun } from './task-runs.js';

export interface SopDeps {
  db: Db;
  llm: LlmGateway;
  tools: ToolRegistry;
  trace: TraceStore;
  notifier: ReviewNotifier;
  logger: Logger;
  /** Identifies this process in run leases. */
  workerId: string;
  leaseMs?: number;
  skill(id: string): Skill;
}

/** A bound on nodes per advance, so a skill with a loop that keeps failing cannot spin forever. */
const MAX_NODES_PER_ADVANCE = 100;

/**
 * Advances a run from its saved node until it ends or suspends (seed 000 section 4.3). Every node's result
 * is saved before the next node starts; a run found at node N after a crash continues at N, never earlier.
 * Returns the run as saved, or undefined when another worker owns it.
 */
export async function advanceTaskRun(deps: SopDeps, taskRunId: string): Promise<TaskRun | undefined> {
  // One owner per advance, not per process: two jobs for the same run in one process must not both hold it.
  const owner = `${deps.workerId}#${randomBytes(4).toString('hex')}`;
  const leased = await acquireLease(deps.db, taskRunId, owner, deps.leaseMs);
  if (!leased) return undefined;
  let run: TaskRun | undefined = leased;
  const skill = deps.skill(leased.skillId);
  const trace = await deps.trace.start({ kind: 'sop', name: `${skill.id}:${leased.recordId}`, input: { taskRunId, from: leased.currentNode } });
  try {
    for (let i = 0; run?.status === 'RUNNING'; i++) {
      if (i >= MAX_NODES_PER_ADVANCE) {
        run = await commitOrStop(deps, owner, run, { node: run.currentNode, type: 'limit', at: new Date().toISOString(), outcome: 'error' }, { nextNode: 'end_error', status: 'FAILED', error: `more than ${MAX_NODES_PER_ADVANCE} nodes in one pass: the skill loops` });
        break;
      }
      const nodeId = run.currentNode;
      const at = new Date().toISOString();
      if (isEndNode(nodeId)) {
        const failed = nodeId === 'end_error';
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: 'end', at, outcome: failed ? 'error' : 'pass' }, { nextNode: nodeId, status: failed ? 'FAILED' : 'COMPLETED', error: failed ? 'the SOP ended in end_error' : undefined });
        break;
      }
      const node = skill.nodes[nodeId];
      if (!node) {
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: 'unknown', at, outcome: 'error' }, { nextNode: 'end_error', status: 'FAILED', error: `node "${nodeId}" is not in skill ${skill.id} (was the skill file changed while the run was suspended?)` });
        break;
      }
      if (node.type === 'human_review') {
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: node.type, at, outcome: 'suspended', next: 'review' }, { nextNode: nodeId, status: 'SUSPENDED', onApprove: node.on_approve, onReject: node.on_reject });
        if (run) await notifyReviewer(deps, run, nodeId, node.description);
        break;
      }
      const record = await loadRecordContext(deps.db, run.projectId, run.recordId);
      let outcome: { passed: boolean; queries: NewQuery[]; detail: unknown };
      try {
        if (node.type === 'hard_rule') {
          const violations = skill.compiled[nodeId]!.run(record.data);
          const eventOf = (field: string) => {
            const prefix = field.split('.')[0]!;
            return prefix in record.versions ? prefix : undefined;
          };
          outcome = { passed: violations.length === 0, queries: violations.map((v) => ({ ...v, eventName: eventOf(v.field) })), detail: { violations: violations.length, versions: record.versions } };
        } else {
          const result = await runWithRetry({ llm: deps.llm, tools: deps.tools, trace }, node.instruction, record.data, { maxRetries: node.max_retries, tools: node.tools });
          outcome = {
            passed: result.passed,
            queries: result.passed ? [] : [{ ruleId: nodeId, field: node.field, message: result.reason, severity: node.severity, value: null }],
            detail: { reason: result.reason, confidence: result.confidence, versions: record.versions },
          };
        }
      } catch (error) {
        // Rate limits and timeouts are worth retrying as a job; anything else goes down the on_error branch.
        if (ClinAgentError.isInstance(error) && (error.code === 'LLM_RATE_LIMITED' || error.code === 'LLM_TIMEOUT')) throw error;
        const next = node.on_error ?? 'end_error';
        run = await commitOrStop(deps, owner, run, { node: nodeId, type: node.type, at, outcome: 'error', next, detail: { error: errorMessage(error) } }, { nextNode: next, status: 'RUNNING' });
        continue;
      }
      const next = outcome.passed ? node.on_pass : node.on_fail;
      run = await commitOrStop(deps, owner, run, { node: nodeId, type: node.type, at, outcome: outcome.passed ? 'pass' : 'fail', next, detail: outcome.detail }, { nextNode: next, status: 'RUNNING', queries: outcome.queries, site: record.site });
    }
    await trace.finish({ status: run?.status === 'FAILED' ? 'failed' : 'success', output: run ? { status: run.status, node: run.currentNode } : { skipped: 'lease lost' } });
    return run;
  } catch (error) {
    await trace.finish({ status: 'failed', error: errorMessage(error) });
    throw error;
  }
}

/** Saves a step; undefined when another worker took the run over (our lease expired), which ends this pass. */
async function commitOrStop(deps: SopDeps, owner: string, run: TaskRun, step: StepRecord, update: Parameters<typeof commitStep>[4]): Promise<TaskRun | undefined> {
  const saved = await commitStep(deps.db, run, owner, step, update, deps.leaseMs);
  if (!saved) deps.logger.warn({ taskRunId: run.id, node: step.node }, 'lost the lease on a task run; leaving it to its new owner');
  return saved;
}

async function notifyReviewer(deps: SopDeps, run: TaskRun, node: string, description: string): Promise<void> {
  const queries = await deps.db
    .select({ field: pendingActions.field, message: pendingActions.message, severity: pendingActions.severity })
    .from(pendingActions)
    .where(and(eq(pendingActions.taskRunId, run.id)));
  const result = await deps.notifier.notify({ taskRunId: run.id, projectId: run.projectId, skillId: run.skillId, recordId: run.recordId, node, description, queries });
  if (!result.delivered) deps.logger.warn({ taskRunId: run.id, error: result.error }, 'review notification not delivered');
}

/** Records a reviewer's decision; the caller enqueues the continuation (see qc/workers.ts). */
export async function resumeTaskRun(db: Db, taskRunId: string, decision: 'approve' | 'reject', reviewer: string, comment = ''): Promise<TaskRun> {
  if (decision !== 'approve' && decision !== 'reject') {
    throw new ClinAgentError('VALIDATION_FAILED', `decision must be "approve" or "reject", not "${String(decision)}".`, { field: 'decision' });
  }
  return decideReview(db, taskRunId, decision, reviewer, comment);
}

export { getTaskRun };
