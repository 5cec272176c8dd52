import { bigserial, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * What an audit entry is about. Trial entities carry their project id; platform entities (users, tokens)
 * carry PLATFORM_AUDIT_SCOPE as project id, so one trail and one chain mechanism serve both.
 */
export type AuditEntityType = 'record' | 'query' | 'task_run' | 'qc_run' | 'project' | 'member' | 'document' | 'user' | 'token' | 'settings';

/** The project id of audit entries that belong to no project (user and token management). */
export const PLATFORM_AUDIT_SCOPE = '@platform';

/** Append-only audit trail (who, when, what, old and new value, why); a trigger refuses UPDATE and DELETE. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    projectId: text('project_id').notNull(),
    entityType: text('entity_type').$type<AuditEntityType>().notNull(),
    entityId: text('entity_id').notNull(),
    action: text('action').notNull(),
    actor: text('actor').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    oldValue: jsonb('old_value'),
    newValue: jsonb('new_value'),
    reason: text('reason').notNull().default(''),
  },
  (t) => [index('audit_log_entity_idx').on(t.projectId, t.entityType, t.entityId, t.id)],
);
