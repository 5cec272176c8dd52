import { customType, index, integer, json, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { agentRuns } from './runs.js';

// PGlite hands bytea back as a plain Uint8Array (node-postgres as a Buffer); its toString('base64') would give "137,80,...".
const bytea = customType<{ data: Buffer; driverData: Uint8Array }>({ dataType: () => 'bytea', fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)) });

/**
 * A consult's uploads (seed 003): images checked by their bytes, kept beside the consult rather than in its run
 * state, which is rewritten at every step. Deleted with the consult's run.
 */
export const consultAttachments = pgTable(
  'consult_attachments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    runId: uuid('run_id').notNull().references(() => agentRuns.id, { onDelete: 'cascade' }),
    userId: uuid('user_id').notNull(),
    /** image/jpeg, image/png or image/webp, as the bytes say (not as the client claimed). */
    mimeType: text('mime_type').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    sha256: text('sha256').notNull(),
    data: bytea('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('consult_attachments_run_idx').on(t.runId)],
);

/** Structured records of consults (generate_medical_dossier), exportable as JSON, Markdown and DOCX. */
export const consultDossiers = pgTable(
  'consult_dossiers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    runId: uuid('run_id').notNull().references(() => agentRuns.id, { onDelete: 'cascade' }),
    userId: uuid('user_id').notNull(),
    content: json('content').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('consult_dossiers_run_idx').on(t.runId, t.createdAt)],
);
