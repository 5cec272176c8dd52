import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects, users } from './auth.js';

/**
 * The raw conversation log: every turn (user, assistant, tool) of a conversation, written as it happens. It is
 * what project memory distils later; models never read it directly, only the history a strategy builds from it.
 */
export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    /** The project the conversation is about, when there is one: its data is what the agent reads. */
    projectId: text('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    scenarioId: text('scenario_id'),
    title: text('title').notNull().default(''),
    /** The `summary` history strategy's rolling summary of the turns up to `summarizedThroughSeq`. */
    summary: text('summary'),
    summarizedThroughSeq: integer('summarized_through_seq').notNull().default(0),
    /**
     * The conversation as another engine knows it (a Dify app's conversation_id), so that continuing ours
     * continues theirs; null for the built-in engine, which reads the turns below.
     */
    engineRef: jsonb('engine_ref').$type<{ type: string; conversationId: string } | null>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('conversations_user_idx').on(t.userId, t.updatedAt), index('conversations_project_idx').on(t.projectId, t.updatedAt)],
);

export type TurnRole = 'user' | 'assistant' | 'tool';

export const conversationTurns = pgTable(
  'conversation_turns',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationId: uuid('conversation_id').notNull().references(() => conversations.id, { onDelete: 'cascade' }),
    /** 1, 2, 3... within the conversation; unique, so two writers cannot interleave a turn. */
    seq: integer('seq').notNull(),
    role: text('role').$type<TurnRole>().notNull(),
    content: text('content').notNull().default(''),
    /** An assistant turn's tool calls: id, name and arguments as the model sent them. */
    toolCalls: jsonb('tool_calls').$type<Array<{ id: string; name: string; arguments: string }> | null>(),
    /** A tool turn answers this call of the assistant turn before it. */
    toolCallId: text('tool_call_id'),
    toolName: text('tool_name'),
    /** Tokens of this turn's content, counted with the shared tokenizer. */
    tokens: integer('tokens').notNull().default(0),
    traceId: uuid('trace_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('conversation_turns_seq_uq').on(t.conversationId, t.seq)],
);
