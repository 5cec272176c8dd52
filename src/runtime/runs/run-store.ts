import type { RunTable } from './run-shape.js';
import { cancelOf } from './run-store/cancel.js';
import { commitStepOf } from './run-store/commit.js';
import { commitStepsOf } from './run-store/commit-batch.js';
import type { RunStore, RunStoreHooks } from './run-store/contract.js';
import { decideOf } from './run-store/decisions.js';
import { leases } from './run-store/leases.js';
import { storeTable } from './run-store/store-table.js';
import { sweepOf } from './run-store/sweep.js';

export { DEFAULT_LEASE_MS } from './run-store/contract.js';
export type { BatchQueue, Decision, RunAuditEvent, RunStore, RunStoreHooks, RunUpdate, StepCommit } from './run-store/contract.js';

/**
 * A durable run store over any table with the run columns (task_runs, agent_runs), made of one part per concern
 * (run-store/): leases, the step commit, the batch commit, decisions, cancel and the orphan sweep, all behind the
 * one RunStore contract. The store knows runs, leases and reviews; everything of a trial or an agent is its hooks.
 */
export function createRunStore<T extends RunTable, Extra = object, DecisionExtra = object>(table: T, hooks: RunStoreHooks<T['$inferSelect'], Extra, DecisionExtra>): RunStore<T['$inferSelect'], Extra, DecisionExtra> & { table: T } {
  const parts = storeTable<T, Extra, DecisionExtra>(table, hooks);
  return {
    table,
    ...leases(parts),
    commitStep: commitStepOf(parts),
    commitSteps: commitStepsOf(parts),
    decide: decideOf(parts),
    cancel: cancelOf(parts),
    ...sweepOf(parts),
  };
}
