import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { projects } from '../../core/db/schema/auth.js';
import { conversations, conversationTurns } from '../../core/db/schema/conversations.js';
import type { TurnRow } from './turn-input.js';
import type { ConversationSummary, ConversationTurn } from './types.js';

/** Every SQL statement of the conversation store, one named function each. */

export type ConversationRow = typeof conversations.$inferSelect;

// Spelt out in full: drizzle leaves columns unqualified in a select list, which would compare the subquery's
// own columns with each other.
const turnCount = sql<number>`(select count(*)::int from "conversation_turns" t where t."conversation_id" = "conversations"."id")`;

export function toSummary(row: ConversationRow, count: number): ConversationSummary {
  return {
    id: row.id,
    userId: row.userId,
    projectId: row.projectId,
    scenarioId: row.scenarioId,
    title: row.title,
    turnCount: Number(count),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toTurn(row: typeof conversationTurns.$inferSelect): ConversationTurn {
  return {
    seq: row.seq,
    role: row.role,
    content: row.content,
    toolCalls: row.toolCalls ?? null,
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    tokens: row.tokens,
    traceId: row.traceId,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function insertConversation(db: Db, values: { id?: string; userId: string; projectId: string | null; scenarioId: string | null; title: string; createdAt: Date; updatedAt: Date }): Promise<ConversationRow> {
  const [row] = await db.insert(conversations).values(values).returning();
  return row!;
}

/** `lock`: take the row lock that serialises appends to one conversation (inside a transaction). */
export async function selectConversation(db: Db, id: string, options: { lock?: boolean } = {}): Promise<ConversationRow | undefined> {
  const query = db.select().from(conversations).where(eq(conversations.id, id));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function updateEngineRef(db: Db, id: string, ref: { type: string; conversationId: string }): Promise<void> {
  await db.update(conversations).set({ engineRef: ref }).where(eq(conversations.id, id));
}

export async function selectTurns(db: Db, conversationId: string): Promise<ConversationTurn[]> {
  const rows = await db.select().from(conversationTurns).where(eq(conversationTurns.conversationId, conversationId)).orderBy(asc(conversationTurns.seq));
  return rows.map(toTurn);
}

export async function selectLastSeq(db: Db, conversationId: string): Promise<number> {
  const [row] = await db.select({ last: sql<number>`coalesce(max(${conversationTurns.seq}), 0)::int` }).from(conversationTurns).where(eq(conversationTurns.conversationId, conversationId));
  return Number(row?.last ?? 0);
}

/** Inserts turns numbered from `firstSeq` on and marks the conversation active at `now`. */
export async function insertTurns(db: Db, conversationId: string, firstSeq: number, turns: TurnRow[], now: Date): Promise<ConversationTurn[]> {
  const rows = await db
    .insert(conversationTurns)
    .values(turns.map((turn, i) => ({ ...turn, conversationId, seq: firstSeq + i })))
    .returning();
  await db.update(conversations).set({ updatedAt: now }).where(eq(conversations.id, conversationId));
  return rows.sort((a, b) => a.seq - b.seq).map(toTurn);
}

export async function selectConversations(db: Db, filter: { userId: string; projectId?: string; scenarioId?: string; limit: number }): Promise<ConversationSummary[]> {
  const conditions: SQL[] = [eq(conversations.userId, filter.userId)];
  if (filter.projectId !== undefined) conditions.push(eq(conversations.projectId, filter.projectId));
  if (filter.scenarioId !== undefined) conditions.push(eq(conversations.scenarioId, filter.scenarioId));
  const rows = await db
    .select({ row: conversations, turnCount })
    .from(conversations)
    .where(and(...conditions))
    .orderBy(desc(conversations.updatedAt), desc(conversations.createdAt), desc(conversations.id))
    .limit(filter.limit);
  return rows.map(({ row, turnCount: count }) => toSummary(row, count));
}

/**
 * Saves a newer summary. The `summarized_through_seq < throughSeq` guard keeps a slower concurrent run from
 * replacing a summary that already covers more turns.
 */
export async function updateSummary(db: Db, conversationId: string, summary: string, throughSeq: number): Promise<void> {
  await db
    .update(conversations)
    .set({ summary, summarizedThroughSeq: throughSeq })
    .where(and(eq(conversations.id, conversationId), sql`${conversations.summarizedThroughSeq} < ${throughSeq}`));
}

export async function projectExists(db: Db, projectId: string): Promise<boolean> {
  const [row] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId));
  return Boolean(row);
}
