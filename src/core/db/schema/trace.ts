import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The audit record of agent work. A trace is one run (agent run, job, ...); spans are the LLM calls, tool
 * calls and retrievals inside it. Rows are written in batches within half a second of the step (core/trace),
 * so a run that crashes still leaves a record of all but its last moments; a clean shutdown writes every row.
 */
export const traces = pgTable(
  'traces',
  {
    id: uuid('id').primaryKey(),
    kind: text('kind').notNull(),
    name: text('name').notNull(),
    status: text('status').$type<'running' | 'success' | 'failed' | 'cancelled'>().notNull(),
    userId: uuid('user_id'),
    /** The project whose data the run read; members of it (and admins) may read the trace. */
    projectId: text('project_id'),
    /** Only admins read it (the trial assistant's thoughts and observations, seed 000 section 5); its user and project members do not. */
    adminOnly: boolean('admin_only').notNull().default(false),
    input: jsonb('input'),
    output: jsonb('output'),
    error: text('error'),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    durationMs: integer('duration_ms'),
  },
  (t) => [index('traces_started_idx').on(t.startedAt), index('traces_project_idx').on(t.projectId, t.startedAt)],
);

export const spans = pgTable(
  'spans',
  {
    id: uuid('id').primaryKey(),
    traceId: uuid('trace_id')
      .notNull()
      .references(() => traces.id, { onDelete: 'cascade' }),
    parentId: uuid('parent_id'),
    /** Start order within the trace; timestamps tie when steps start in the same millisecond. */
    seq: integer('seq').notNull(),
    kind: text('kind').$type<'llm' | 'tool' | 'retrieval' | 'step'>().notNull(),
    name: text('name').notNull(),
    status: text('status').$type<'success' | 'failed'>().notNull(),
    input: jsonb('input'),
    output: jsonb('output'),
    error: text('error'),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    durationMs: integer('duration_ms').notNull(),
  },
  (t) => [index('spans_trace_idx').on(t.traceId, t.seq)],
);
