import { customType, index, integer, json, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
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

/**
 * The consult messages a client named (its clientMessageId), one row per id and consult: taken in the same
 * transaction as the message itself, so a message resent after a failure (a 503, a dropped connection) is never
 * taken twice. `fingerprint` (sha256 of the message as stored and its image's bytes) tells a resend from another
 * message under a reused id; `reply` is the answer the first attempt got, sent again to every resend.
 */
export const consultClientMessages = pgTable(
  'consult_client_messages',
  {
    runId: uuid('run_id').notNull().references(() => agentRuns.id, { onDelete: 'cascade' }),
    clientMessageId: uuid('client_message_id').notNull(),
    fingerprint: text('fingerprint').notNull(),
    reply: jsonb('reply').$type<Record<string, unknown>>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    answeredAt: timestamp('answered_at', { withTimezone: true }),
  },
  (t) => [primaryKey({ name: 'consult_client_messages_pk', columns: [t.runId, t.clientMessageId] })],
);
