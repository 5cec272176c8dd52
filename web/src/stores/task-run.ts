import { create } from 'zustand';
import { api, type AuditEntry, type DataQuery, type TaskRun } from '../api';

/** A run a worker may still be advancing: worth polling until it completes, fails or stops for review. */
export function isTaskRunActive(run: TaskRun): boolean {
  return run.status === 'PENDING' || run.status === 'RUNNING';
}

export const TASK_RUN_POLL_INTERVAL_MS = 1000;

export interface TaskRunView {
  run: TaskRun;
  queries: DataQuery[];
  audit: AuditEntry[];
}

export type TaskRunEntry = { status: 'loading' } | { status: 'loaded'; view: TaskRunView } | { status: 'error'; error: unknown };

interface TaskRunState {
  entries: Record<string, TaskRunEntry>;
  load(projectId: string, taskRunId: string): Promise<TaskRunView | null>;
  reset(): void;
}

/** One task run with its steps, the queries it opened and its audit trail (created, suspended, reviewed, ...). */
export const useTaskRunStore = create<TaskRunState>()((set, get) => {
  function put(taskRunId: string, entry: TaskRunEntry): void {
    set((state) => ({ entries: { ...state.entries, [taskRunId]: entry } }));
  }
  return {
    entries: {},
    async load(projectId, taskRunId) {
      if (get().entries[taskRunId]?.status !== 'loaded') put(taskRunId, { status: 'loading' });
      try {
        const [run, queries, audit] = await Promise.all([
          api.trial.getTaskRun(taskRunId),
          api.trial.listQueries(projectId, { taskRunId }),
          api.trial.listAudit(projectId, { entityType: 'task_run', entityId: taskRunId }),
        ]);
        const view = { run, queries, audit };
        put(taskRunId, { status: 'loaded', view });
        return view;
      } catch (error) {
        put(taskRunId, { status: 'error', error });
        return null;
      }
    },
    reset() {
      set({ entries: {} });
    },
  };
});
