import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, max, or, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { conversations, conversationTurns } from '../../core/db/schema/conversations.js';
import { answerFeedback, projectMemory } from '../../core/db/schema/memory.js';

/** The SQL the distillation reads and marks: a project's new conversation turns and its unread feedback. */

export interface TurnToDistill {
  id: number;
  conversationId: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
}

export interface FeedbackToDistill {
  id: string;
  conversationId: string;
  turnSeq: number;
  rating: 'up' | 'down';
  comment: string;
  /** The rated answer, so the model knows what was liked or disliked. */
  answer: string;
}

/** The newest turn id of the project's conversations after `afterId`, any role; undefined when there is none. */
export async function selectLastTurnId(db: Db, projectId: string, afterId: number): Promise<number | undefined> {
  const [row] = await db
    .select({ last: max(conversationTurns.id) })
    .from(conversationTurns)
    .innerJoin(conversations, eq(conversations.id, conversationTurns.conversationId))
    .where(and(eq(conversations.projectId, projectId), gt(conversationTurns.id, afterId)));
  return row?.last == null ? undefined : Number(row.last);
}

/**
 * User and assistant turns of this project's conversations in (afterId, throughId], oldest first. Tool turns
 * are never read: their output can hold whole trial records, which have no place in a memory the model
 * always sees.
 */
export async function selectTurnsToDistill(db: Db, projectId: string, afterId: number, throughId: number, limit: number): Promise<TurnToDistill[]> {
  const rows = await db
    .select({ id: conversationTurns.id, conversationId: conversationTurns.conversationId, seq: conversationTurns.seq, role: conversationTurns.role, content: conversationTurns.content })
    .from(conversationTurns)
    .innerJoin(conversations, eq(conversations.id, conversationTurns.conversationId))
    .where(
      and(
        eq(conversations.projectId, projectId),
        gt(conversationTurns.id, afterId),
        lte(conversationTurns.id, throughId),
        inArray(conversationTurns.role, ['user', 'assistant']),
      ),
    )
    .orderBy(asc(conversationTurns.id))
    .limit(limit);
  return rows.map((row) => ({ ...row, id: Number(row.id), role: row.role as 'user' | 'assistant' }));
}

export async function selectUnreadFeedback(db: Db, projectId: string, limit: number): Promise<FeedbackToDistill[]> {
  const rows = await db
    .select({
      id: answerFeedback.id,
      conversationId: answerFeedback.conversationId,
      turnSeq: answerFeedback.turnSeq,
      rating: answerFeedback.rating,
      comment: answerFeedback.comment,
      answer: sql<string | null>`${conversationTurns.content}`,
    })
    .from(answerFeedback)
    .leftJoin(conversationTurns, and(eq(conversationTurns.conversationId, answerFeedback.conversationId), eq(conversationTurns.seq, answerFeedback.turnSeq)))
    .where(and(eq(answerFeedback.projectId, projectId), isNull(answerFeedback.distilledAt)))
    .orderBy(asc(answerFeedback.updatedAt), asc(answerFeedback.id))
    .limit(limit);
  return rows.map((row) => ({ ...row, answer: row.answer ?? '' }));
}

/**
 * Marks feedback read, but only as it was read: a rating or comment changed while the model was thinking
 * differs from what the model saw and stays unread for the next run. (Compared by value, not by updated_at,
 * whose microseconds a JavaScript Date cannot hold.)
 */
export async function markFeedbackDistilled(tx: Db, read: ReadonlyArray<Pick<FeedbackToDistill, 'id' | 'rating' | 'comment'>>, at: Date): Promise<void> {
  if (!read.length) return;
  await tx
    .update(answerFeedback)
    .set({ distilledAt: at })
    .where(or(...read.map((item) => and(eq(answerFeedback.id, item.id), eq(answerFeedback.rating, item.rating), eq(answerFeedback.comment, item.comment)))));
}

/** Projects with a conversation turn newer than their watermark, or with turns and no memory row yet. */
export async function selectProjectsToDistill(db: Db): Promise<string[]> {
  const rows = await db
    .selectDistinct({ projectId: conversations.projectId })
    .from(conversationTurns)
    .innerJoin(conversations, eq(conversations.id, conversationTurns.conversationId))
    .leftJoin(projectMemory, eq(projectMemory.projectId, conversations.projectId))
    .where(and(isNotNull(conversations.projectId), gt(conversationTurns.id, sql`coalesce(${projectMemory.distilledThroughTurnId}, 0)`)))
    .orderBy(asc(conversations.projectId));
  return rows.map((row) => row.projectId!);
}
