import { desc, eq } from 'drizzle-orm';
import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { apiTokens } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import { toTokenInfo, type TokenInfo, type TokenIssuer } from './token-issuer.js';
import { userNotFound, userRow } from './user-rows.js';
import type { Actor } from './users.js';
import { withTransaction } from '../db/transaction.js';

/** API tokens as admins and their owners manage them; checking a token is `TokenAuthenticator`'s job. */
export interface TokenStore {
  issueToken(userId: string, options?: { label?: string; actor?: string }): Promise<{ token: string; info: TokenInfo }>;
  /** A user's tokens, newest first. Admins may list anyone's; others only their own (else NOT_FOUND). */
  listTokens(userId: string, reader: Actor): Promise<TokenInfo[]>;
  /** Revokes a token at once. Admins may revoke any; others only their own (else NOT_FOUND). */
  revokeToken(tokenId: string, actor: Actor): Promise<TokenInfo>;
}

export function createTokenStore(db: Db, deps: { issueToken: TokenIssuer }): TokenStore {
  return {
    async issueToken(userId, { label = '', actor = 'system' } = {}) {
      return withTransaction(db, async (tx) => {
        const row = await userRow(tx, userId);
        if (row.deactivatedAt) {
          throw new ClinAgentError('CONFLICT_STATE', `User "${row.name}" is deactivated, so a new token would not work. Reactivate them first (POST /api/users/${row.id}/reactivate).`, { userId, reason: 'deactivated' });
        }
        return deps.issueToken(tx, row, label, actor);
      });
    },

    async listTokens(userId, reader) {
      // Someone else's tokens look like an unknown user, so ids reveal nothing.
      if (reader.role !== 'admin' && reader.id !== userId) throw userNotFound(userId);
      await userRow(db, userId);
      return (await db.select().from(apiTokens).where(eq(apiTokens.userId, userId)).orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))).map(toTokenInfo);
    },

    async revokeToken(tokenId, actor) {
      const notFound = () => new ClinAgentError('NOT_FOUND', `Token "${tokenId}" does not exist or is not yours. Token ids are listed by GET /api/users/:id/tokens.`, { tokenId });
      if (!isUuid(tokenId)) throw notFound();
      return withTransaction(db, async (tx) => {
        const [row] = await tx.select().from(apiTokens).where(eq(apiTokens.id, tokenId)).for('update');
        if (!row || (actor.role !== 'admin' && row.userId !== actor.id)) throw notFound();
        // Revoking twice changes nothing and records nothing: the first revocation stands.
        if (row.revokedAt) return toTokenInfo(row);
        const [revoked] = await tx.update(apiTokens).set({ revokedAt: new Date() }).where(eq(apiTokens.id, tokenId)).returning();
        await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'token', entityId: tokenId, action: 'revoked', actor: actor.name, oldValue: { revokedAt: null }, newValue: { userId: row.userId, label: row.label, revokedAt: revoked!.revokedAt!.toISOString() } });
        return toTokenInfo(revoked!);
      });
    },
  };
}
