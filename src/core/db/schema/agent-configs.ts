import { integer, json, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Staged agents' configurations (seed 001: agent, stage, reflexion and card settings an admin may change without a
 * release), one row per version, never updated: the newest version is the one in use, and every earlier one stays
 * readable, so a protocol written under version 3 can be explained after version 4. Versions come from the shipped
 * YAML (`source = 'seed'`, with the file's own version) or from an admin through the API.
 */
export const agentConfigs = pgTable(
  'agent_configs',
  {
    agentId: text('agent_id').notNull(),
    version: integer('version').notNull(),
    // json, not jsonb: the configuration keeps its author's key order (stage schemas, examples shown to the model).
    config: json('config').$type<Record<string, unknown>>().notNull(),
    source: text('source').$type<'seed' | 'admin'>().notNull(),
    /** The shipped file's `version` this row was seeded from (or, for an admin's edit, was based on). */
    seedVersion: integer('seed_version').notNull(),
    createdBy: text('created_by').notNull(),
    note: text('note').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.version] })],
);
