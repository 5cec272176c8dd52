import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { apiTokens } from '../db/schema/auth.js';
import { generateToken, hashToken } from './tokens.js';
import { iso } from './user-rows.js';
import type { User } from './users.js';

/** A token as its owner and admins see it: never the token or its hash. */
export interface TokenInfo {
  id: string;
  userId: string;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** Null: never expires (CLINAGENT_ADMIN_TOKEN). */
  expiresAt: string | null;
  revokedAt: string | null;
}

const DEFAULT_TOKEN_TTL_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;

export const toTokenInfo = (row: typeof apiTokens.$inferSelect): TokenInfo => ({
  id: row.id,
  userId: row.userId,
  label: row.label,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: iso(row.lastUsedAt),
  expiresAt: iso(row.expiresAt),
  revokedAt: iso(row.revokedAt),
});

/**
 * Inserts a new user token and its audit entry on `tx`, so both commit together with whatever the caller
 * does in the same transaction (a new user, a used sign-in code). One function for every path that hands out
 * a token, so all of them get the configured lifetime.
 */
export type TokenIssuer = (tx: Db, user: Pick<User, 'id' | 'name'>, label: string, actor: string) => Promise<{ token: string; info: TokenInfo }>;

export function createTokenIssuer(options: { tokenTtlDays?: number } = {}): TokenIssuer {
  const tokenTtlMs = (options.tokenTtlDays ?? DEFAULT_TOKEN_TTL_DAYS) * DAY_MS;
  return async (tx, user, label, actor) => {
    const token = generateToken();
    const [row] = await tx.insert(apiTokens).values({ userId: user.id, tokenHash: hashToken(token), label, expiresAt: new Date(Date.now() + tokenTtlMs) }).returning();
    const info = toTokenInfo(row!);
    await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'token', entityId: info.id, action: 'issued', actor, newValue: { userId: user.id, userName: user.name, label, expiresAt: info.expiresAt } });
    return { token, info };
  };
}
