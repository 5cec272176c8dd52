import { bigint, bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects, users } from './auth.js';
import { conversations } from './conversations.js';

/**
 * Project memory (seed 002): besides the raw conversation log (conversations.ts), two stores the model reads.
 * - hot memory: one short markdown document per project (preferences, current state, prohibitions), always in the
 *   assistant's prompt; every line keeps where it came from;
 * - memory reports: one summary per project week, and yearly summaries that older weeks are rolled into; read only
 *   for history and trend questions.
 */

export type HotMemorySection = 'preferences' | 'state' | 'prohibitions';

/** Where a hot-memory line came from: a conversation turn, a trial record, a weekly report, feedback, or a person. */
export interface MemoryLineSource {
  kind: 'turn' | 'record' | 'report' | 'feedback' | 'user';
  /** turn: `${conversationId}#${seq}`; record: record id; report: report id; feedback: feedback id; user: user name. */
  ref: string;
}

export interface HotMemoryLine {
  section: HotMemorySection;
  text: string;
  source: MemoryLineSource;
  /** Who (or which job) wrote the line, and when (ISO 8601). */
  addedBy: string;
  addedAt: string;
}

/** Every way hot memory is written; each goes through the one write function. */
export type MemoryWritePath = 'chat' | 'api' | 'editor' | 'distillation' | 'pruning' | 'rollback';

/** Set when a write could not be made to fit under the cap even after pruning: the admin has to shorten it. */
export interface MemoryOverflow {
  at: string;
  path: MemoryWritePath;
  /** Tokens the memory would have had, and the cap. */
  tokens: number;
  maxTokens: number;
  /** The lines that were not stored, so the admin can decide what to keep. */
  pendingLines: HotMemoryLine[];
  message: string;
}

export const projectMemory = pgTable('project_memory', {
  projectId: text('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  /** 1 for the first write; each write adds one (and a row in project_memory_versions). */
  version: integer('version').notNull().default(0),
  lines: jsonb('lines').$type<HotMemoryLine[]>().notNull().default([]),
  /** The markdown rendered from `lines`: what the editor shows and the prompt holds. */
  content: text('content').notNull().default(''),
  tokens: integer('tokens').notNull().default(0),
  overflow: jsonb('overflow').$type<MemoryOverflow | null>(),
  /** The daily distillation has read the conversation log up to this turn id (conversation_turns.id). */
  distilledThroughTurnId: bigint('distilled_through_turn_id', { mode: 'number' }).notNull().default(0),
  updatedBy: text('updated_by').notNull().default(''),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const projectMemoryVersions = pgTable(
  'project_memory_versions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    lines: jsonb('lines').$type<HotMemoryLine[]>().notNull(),
    content: text('content').notNull(),
    tokens: integer('tokens').notNull(),
    path: text('path').$type<MemoryWritePath>().notNull(),
    actor: text('actor').notNull(),
    reason: text('reason').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('project_memory_versions_uq').on(t.projectId, t.version)],
);

export type MemoryReportKind = 'week' | 'year';

export const memoryReports = pgTable(
  'memory_reports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<MemoryReportKind>().notNull(),
    /** First day of the period, YYYY-MM-DD (UTC): the Monday of an ISO week, 1 January of a year. */
    periodStart: text('period_start').notNull(),
    /** '2026-W47' or '2025'. */
    label: text('label').notNull(),
    summary: text('summary').notNull(),
    tokens: integer('tokens').notNull().default(0),
    /** Conversation turns (weeks) or weekly reports (years) the summary was made from. */
    sourceCount: integer('source_count').notNull().default(0),
    generatedBy: text('generated_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('memory_reports_period_uq').on(t.projectId, t.kind, t.periodStart)],
);

export const answerFeedback = pgTable(
  'answer_feedback',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    /** The assistant turn rated. */
    turnSeq: integer('turn_seq').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    rating: text('rating').$type<'up' | 'down'>().notNull(),
    comment: text('comment').notNull().default(''),
    /** Set when a distillation has read it; a new rating or comment clears it. */
    distilledAt: timestamp('distilled_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('answer_feedback_turn_user_uq').on(t.conversationId, t.turnSeq, t.userId), index('answer_feedback_project_idx').on(t.projectId, t.distilledAt)],
);

export type DetailLevel = 'brief' | 'standard' | 'detailed';
export type AnswerLanguage = 'auto' | 'zh' | 'en';

/** How a user likes to be answered (seed 000 V2.9 ProfilerService): used in every assistant prompt. */
export const userProfiles = pgTable('user_profiles', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  detailLevel: text('detail_level').$type<DetailLevel>().notNull().default('standard'),
  language: text('language').$type<AnswerLanguage>().notNull().default('auto'),
  /** The user's job in the trial as they describe it ("PI", "CRC", "data manager"); free text, at most 60 characters. */
  roleTitle: text('role_title').notNull().default(''),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
