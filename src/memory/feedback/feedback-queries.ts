import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { conversations, conversationTurns } from '../../core/db/schema/conversations.js';
import { answerFeedback } from '../../core/db/schema/memory.js';
import type { FeedbackView } from '../types.js';

/** Every SQL statement on answer_feedback, one named function each. */

type FeedbackRow = typeof answerFeedback.$inferSelect;

export function toFeedbackView(row: FeedbackRow): FeedbackView {
  return {
    id: row.id,
    projectId: row.projectId,
    conversationId: row.conversationId,
    turnSeq: row.turnSeq,
    userId: row.userId,
    rating: row.rating,
    comment: row.comment,
    distilledAt: row.distilledAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function selectProjectConversation(db: Db, projectId: string, conversationId: string): Promise<{ id: string } | undefined> {
  const [row] = await db.select({ id: conversations.id }).from(conversations).where(and(eq(conversations.id, conversationId), eq(conversations.projectId, projectId)));
  return row;
}

export async function selectTurnRole(db: Db, conversationId: string, seq: number): Promise<string | undefined> {
  const [row] = await db.select({ role: conversationTurns.role }).from(conversationTurns).where(and(eq(conversationTurns.conversationId, conversationId), eq(conversationTurns.seq, seq)));
  return row?.role;
}

export async function selectLastSeq(db: Db, conversationId: string): Promise<number> {
  const [row] = await db.select({ last: sql<number>`coalesce(max(${conversationTurns.seq}), 0)::int` }).from(conversationTurns).where(eq(conversationTurns.conversationId, conversationId));
  return Number(row?.last ?? 0);
}

/**
 * One rating per user and answer: rating again replaces it. A changed rating or comment is news for the
 * distillation, so it clears distilled_at; the same rating clicked twice leaves it read. An absent comment
 * keeps the one already written (a thumb clicked after commenting does not erase the comment).
 */
export async function upsertFeedback(db: Db, values: { projectId: string; conversationId: string; turnSeq: number; userId: string; rating: 'up' | 'down'; comment?: string }, now: Date): Promise<FeedbackRow> {
  const comment = values.comment === undefined ? sql`${answerFeedback.comment}` : sql`excluded.comment`;
  const [row] = await db
    .insert(answerFeedback)
    .values({ ...values, comment: values.comment ?? '', createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: [answerFeedback.conversationId, answerFeedback.turnSeq, answerFeedback.userId],
      set: {
        rating: sql`excluded.rating`,
        comment,
        updatedAt: now,
        distilledAt: sql`case when ${answerFeedback.rating} is distinct from excluded.rating or ${answerFeedback.comment} is distinct from ${comment} then null else ${answerFeedback.distilledAt} end`,
      },
    })
    .returning();
  return row!;
}

export async function selectFeedback(db: Db, projectId: string, limit: number): Promise<FeedbackView[]> {
  const rows = await db.select().from(answerFeedback).where(eq(answerFeedback.projectId, projectId)).orderBy(desc(answerFeedback.updatedAt), desc(answerFeedback.id)).limit(limit);
  return rows.map(toFeedbackView);
}
