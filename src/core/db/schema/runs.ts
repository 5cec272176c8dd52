import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { projects } from './auth.js';
import { conversations } from './conversations.js';
import { runColumns, type RunStatus } from './run-columns.js';

/**
 * Durable runs of agents other than trial QC (a protocol stage waiting for confirmation, a consult waiting for
 * an answer). The columns the generic run store works on (status, current node, steps, review, lease) are the
 * same as trial task runs', so one store serves both tables; `state` is the agent's own checkpoint.
 */
export const agentRuns = pgTable(
  'agent_runs',
  {
    /** Which agent: 'protocol-stage', 'consult', ... */
    kind: text('kind').notNull(),
    projectId: text('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    userId: uuid('user_id'),
    /** The conversation the run answers in, when it has one: a conversation knows its agent and its runs. */
    conversationId: uuid('conversation_id').references(() => conversations.id, { onDelete: 'set null' }),
    ...runColumns<RunStatus>(),
    /** The agent's own checkpoint (a turn's messages). */
    state: jsonb('state').$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [index('agent_runs_status_idx').on(t.kind, t.status), index('agent_runs_project_idx').on(t.projectId, t.status), index('agent_runs_user_idx').on(t.userId, t.kind, t.createdAt), index('agent_runs_conversation_idx').on(t.conversationId)],
);
