import { createHash } from 'node:crypto';
import type { AuditEntryInput } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/connect.js';
import { ClinAgentError } from '../../../core/errors.js';
import type { RunRow, RunShape, RunTable } from '../run-shape.js';
import type { RunAuditEvent, RunStoreHooks } from './contract.js';

const DEFAULT_AUDIT_ACTION = (event: RunAuditEvent): string => {
  switch (event.type) {
    case 'step': return event.status === 'RUNNING' ? `node:${event.step.node}:${event.step.outcome}` : event.status.toLowerCase();
    case 'decision': return event.kind === 'approve' ? 'review_approved' : event.kind === 'reject' ? 'review_rejected' : 'answered';
    default: return event.type;
  }
};

/** What an audit entry of a run's own change carries besides what the store fills in. */
export type RunAuditEntry = Omit<AuditEntryInput, 'projectId' | 'entityType' | 'entityId' | 'actor' | 'action'> & { actor?: string; action?: string };

/**
 * What every part of a run store (leases, commits, decisions, cancel, the sweep) works on: the caller's table typed
 * as the run columns, its hooks, and the helpers they share. At run time every query uses the caller's table object,
 * so it names its own table and columns.
 */
export interface StoreTable<T extends RunTable, Extra, DecisionExtra> {
  table: T;
  t: RunShape;
  hooks: RunStoreHooks<T['$inferSelect'], Extra, DecisionExtra>;
  idName: string;
  asRow(row: RunRow): T['$inferSelect'];
  core(row: T['$inferSelect']): RunRow;
  /** The audit entries of one event of a run; none when the store audits nothing or the event is left out. */
  auditOf(run: T['$inferSelect'], event: RunAuditEvent, entry: RunAuditEntry): AuditEntryInput[];
  /** The sha256 of what a person waiting on the run is shown (RunStoreHooks.reviewFingerprint), if the store binds decisions to it. */
  fingerprintHash(tx: Db, run: T['$inferSelect']): Promise<string | undefined>;
  notFound(id: string): ClinAgentError;
}

export function storeTable<T extends RunTable, Extra, DecisionExtra>(table: T, hooks: RunStoreHooks<T['$inferSelect'], Extra, DecisionExtra>): StoreTable<T, Extra, DecisionExtra> {
  type Row = T['$inferSelect'];
  const core = (row: Row): RunRow => row as unknown as RunRow;
  const idName = hooks.idName ?? 'runId';
  return {
    table,
    t: table as unknown as RunShape,
    hooks,
    idName,
    asRow: (row) => row as unknown as Row,
    core,
    auditOf(run, event, entry) {
      const projectId = hooks.audit?.projectId(run);
      if (!hooks.audit || !projectId) return [];
      const action = entry.action ?? (hooks.audit.action ?? DEFAULT_AUDIT_ACTION)(event);
      if (!action) return [];
      return [{ ...entry, action, projectId, entityType: hooks.audit.entityType, entityId: core(run).id, actor: entry.actor ?? hooks.audit.actor(run) }];
    },
    async fingerprintHash(tx, run) {
      if (!hooks.reviewFingerprint) return undefined;
      return createHash('sha256').update(await hooks.reviewFingerprint(tx, run)).digest('hex');
    },
    notFound: (id) => new ClinAgentError('NOT_FOUND', `${hooks.label} "${id}" does not exist. Check the id.`, { [idName]: id }),
  };
}
