import { bigserial, boolean, check, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';

/**
 * What an audit entry is about. Trial entities carry their project id; platform entities (users, tokens)
 * carry PLATFORM_AUDIT_SCOPE as project id, so one trail and one chain mechanism serve both.
 */
export type AuditEntityType = 'record' | 'query' | 'task_run' | 'qc_run' | 'project' | 'member' | 'document' | 'user' | 'token' | 'settings' | 'memory' | 'memory_report' | 'profile' | 'agent_run' | 'agent_config' | 'skill';

/** The project id of audit entries that belong to no project (user and token management). */
export const PLATFORM_AUDIT_SCOPE = '@platform';

/** Append-only audit trail (who, when, what, old and new value, why); a trigger refuses UPDATE and DELETE, a hash chain shows any edit that bypassed it. */
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
    /**
     * The hash chain (migrations 0005 and 0008): per project, each entry stores the hash of the entry before it and
     * its own HMAC-SHA256, keyed with the audit key (AUDIT_KEY, never in the database), over a canonical form of
     * (prev_hash, id, project_id, ..., reason). The BEFORE INSERT trigger audit_log_chain computes both, so any
     * value given here is replaced; verifyAuditChain recomputes them.
     */
    prevHash: text('prev_hash').notNull().$defaultFn(() => ''),
    hash: text('hash').notNull().$defaultFn(() => ''),
  },
  (t) => [index('audit_log_entity_idx').on(t.projectId, t.entityType, t.entityId, t.id), index('audit_log_chain_idx').on(t.projectId, t.id)],
);

/**
 * Which audit key the trail is chained with (one row): the key's fingerprint, never the key. A ClinAgent process
 * with another key (a second host without the key file, a lost key replaced by a new one) is refused at start and
 * by the chain trigger, instead of writing entries that no longer verify.
 */
export const auditChainKey = pgTable(
  'audit_chain_key',
  {
    id: boolean('id').primaryKey().default(true),
    fingerprint: text('fingerprint').notNull(),
    recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('audit_chain_key_single_row', sql`${t.id}`)],
);
