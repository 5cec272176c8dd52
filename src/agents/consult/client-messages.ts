import { and, desc, eq, isNull } from 'drizzle-orm';
import { createHash } from 'node:crypto';
import type { Db } from '../../core/db/connect.js';
import { consultAttachments, consultClientMessages } from '../../core/db/schema/consult.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ConsultReply, ConsultState } from './consult-state.js';

/**
 * A consult message the client named with its clientMessageId (an idempotency key, as Stripe's Idempotency-Key):
 * after a 503 or a dropped connection the client cannot know whether the message was taken, so it sends it again
 * with the same id. The id is recorded in the transaction that takes the message (consult_client_messages), so a
 * resend is never taken twice; it gets the first attempt's reply instead, or the reply to the message already taken.
 */

/** What a resend must match: the message as stored (identifiers replaced) and its image's bytes. */
export function messageFingerprint(text: string, imageSha256: string | undefined): string {
  return createHash('sha256').update(JSON.stringify([text, imageSha256 ?? null])).digest('hex');
}

export function reusedIdError(clientMessageId: string): ClinAgentError {
  return new ClinAgentError(
    'CONFLICT_STATE',
    `clientMessageId "${clientMessageId}" was already sent with another message of this consult (other text or image). Make a new id for each new message; send an id again only to resend the very same message.`,
    { field: 'clientMessageId', reason: 'client_message_id_reused' },
  );
}

/** Thrown inside the taking transaction when the message was answered meanwhile: the caller sends that reply. */
function answeredError(clientMessageId: string): ClinAgentError {
  return new ClinAgentError('CONFLICT_STATE', `The message "${clientMessageId}" was answered already; reload the consult to read its reply.`, { field: 'clientMessageId', reason: 'client_message_answered' });
}

/** The user turn a message with this id made, and whether it is the consult's latest exchange. */
export function answeredTurn(state: ConsultState, clientMessageId: string): { isLatest: boolean } | undefined {
  const index = state.turns.findLastIndex((t) => t.role === 'user' && t.clientMessageId === clientMessageId);
  if (index < 0) return undefined;
  return { isLatest: index === state.turns.length - 2 && state.turns.at(-1)?.role === 'assistant' };
}

export function createClientMessages(db: Db) {
  /** The reply of the consult's latest exchange, kept for its id if the request that made it could not keep it. */
  async function keepLatestReply(tx: Db, runId: string, state: ConsultState): Promise<void> {
    const asked = state.turns.at(-2);
    if (!state.lastReply || asked?.role !== 'user' || !asked.clientMessageId) return;
    await keep(tx, runId, asked.clientMessageId, state.lastReply);
  }

  async function keep(tx: Db, runId: string, clientMessageId: string, reply: ConsultReply): Promise<void> {
    await tx
      .update(consultClientMessages)
      .set({ reply: reply as unknown as Record<string, unknown>, answeredAt: new Date() })
      .where(and(eq(consultClientMessages.runId, runId), eq(consultClientMessages.clientMessageId, clientMessageId), isNull(consultClientMessages.reply)));
  }

  return {
    get: async (runId: string, clientMessageId: string) =>
      (await db.select().from(consultClientMessages).where(and(eq(consultClientMessages.runId, runId), eq(consultClientMessages.clientMessageId, clientMessageId))).limit(1))[0],
    /** The id of the latest image of the consult with these bytes, if any. */
    storedImage: async (runId: string, sha256: string): Promise<string | undefined> =>
      (await db.select({ id: consultAttachments.id }).from(consultAttachments).where(and(eq(consultAttachments.runId, runId), eq(consultAttachments.sha256, sha256))).orderBy(desc(consultAttachments.createdAt)).limit(1))[0]?.id,
    /** The reply a message with this id got, for its resends. */
    keep: (runId: string, clientMessageId: string, reply: ConsultReply) => keep(db, runId, clientMessageId, reply),
    /**
     * In the transaction that takes a message, with the consult's run locked: records its id, or refuses it when the
     * id came with another message (reused) or its message was answered already (a resend racing the first). An id
     * whose message was taken but never answered (its stream was closed) is taken again.
     */
    async onTaken(tx: Db, runId: string, state: ConsultState, input: { text: string; attachmentId?: string; clientMessageId?: string }): Promise<void> {
      await keepLatestReply(tx, runId, state);
      if (!input.clientMessageId) return;
      const [image] = input.attachmentId ? await tx.select({ sha256: consultAttachments.sha256 }).from(consultAttachments).where(and(eq(consultAttachments.id, input.attachmentId), eq(consultAttachments.runId, runId))) : [];
      const fingerprint = messageFingerprint(input.text, image?.sha256);
      const [inserted] = await tx.insert(consultClientMessages).values({ runId, clientMessageId: input.clientMessageId, fingerprint }).onConflictDoNothing().returning({ runId: consultClientMessages.runId });
      if (inserted) return;
      const [earlier] = await tx.select({ fingerprint: consultClientMessages.fingerprint }).from(consultClientMessages).where(and(eq(consultClientMessages.runId, runId), eq(consultClientMessages.clientMessageId, input.clientMessageId)));
      if (earlier && earlier.fingerprint !== fingerprint) throw reusedIdError(input.clientMessageId);
      if (answeredTurn(state, input.clientMessageId)) throw answeredError(input.clientMessageId);
    },
  };
}

export type ClientMessages = ReturnType<typeof createClientMessages>;
