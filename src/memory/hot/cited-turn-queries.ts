import { and, eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { isUuid } from '../../core/ids.js';
import { conversations, conversationTurns } from '../../core/db/schema/conversations.js';

/**
 * The text of the turn a chat fact cites (`<conversation id>#<seq>`), when it is a user turn of `userId`'s own
 * conversation in this project: a fact remembered from the chat must come from what that person wrote there.
 * Undefined for anything else (a malformed reference, another project's or person's turn, an assistant turn).
 */
export async function selectOwnUserTurn(db: Db, input: { projectId: string; userId: string; ref: string }): Promise<string | undefined> {
  const match = /^([0-9a-f-]{36})#(\d{1,9})$/i.exec(input.ref);
  if (!match || !isUuid(match[1]!) || !isUuid(input.userId)) return undefined;
  const [row] = await db
    .select({ content: conversationTurns.content })
    .from(conversationTurns)
    .innerJoin(conversations, eq(conversations.id, conversationTurns.conversationId))
    .where(
      and(
        eq(conversationTurns.conversationId, match[1]!),
        eq(conversationTurns.seq, Number(match[2])),
        eq(conversationTurns.role, 'user'),
        eq(conversations.projectId, input.projectId),
        eq(conversations.userId, input.userId),
      ),
    );
  return row?.content;
}
