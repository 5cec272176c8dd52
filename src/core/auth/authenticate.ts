import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { apiTokens, users } from '../db/schema/auth.js';
import { hashToken } from './tokens.js';
import { toUser } from './user-rows.js';
import type { User } from './users.js';

/** Why a bearer token was refused; the access hook turns each into a message saying how to get a working one. */
export type Authentication =
  | { ok: true; user: User; tokenId: string }
  | { ok: false; reason: 'unknown' }
  | { ok: false; reason: 'revoked' | 'expired' | 'deactivated'; at: string };

/**
 * `last_used_at` is written at most this often per token: every request writing a row would double the
 * database work of a busy console, and "used in the last minute" is as precise as anyone reading it needs.
 */
const LAST_USED_RESOLUTION_MS = 60_000;

/** What the request edge needs to know about a bearer token, and nothing else. */
export interface TokenAuthenticator {
  /** Checks a bearer token; says why when it does not work. Records when the token was last used. */
  authenticate(token: string): Promise<Authentication>;
  /** The user of a working token, or undefined. */
  findByToken(token: string): Promise<User | undefined>;
}

export function createTokenAuthenticator(db: Db): TokenAuthenticator {
  async function authenticate(token: string): Promise<Authentication> {
    const [row] = await db
      .select({ id: users.id, name: users.name, role: users.role, deactivatedAt: users.deactivatedAt, tokenId: apiTokens.id, expiresAt: apiTokens.expiresAt, revokedAt: apiTokens.revokedAt, lastUsedAt: apiTokens.lastUsedAt })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId))
      .where(eq(apiTokens.tokenHash, hashToken(token)));
    if (!row) return { ok: false, reason: 'unknown' };
    const now = new Date();
    if (row.revokedAt) return { ok: false, reason: 'revoked', at: row.revokedAt.toISOString() };
    if (row.deactivatedAt) return { ok: false, reason: 'deactivated', at: row.deactivatedAt.toISOString() };
    if (row.expiresAt && row.expiresAt <= now) return { ok: false, reason: 'expired', at: row.expiresAt.toISOString() };
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      // The condition repeats the throttle, so concurrent requests of one token write the row once.
      await db
        .update(apiTokens)
        .set({ lastUsedAt: now })
        .where(and(eq(apiTokens.id, row.tokenId), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, new Date(now.getTime() - LAST_USED_RESOLUTION_MS)))));
    }
    return { ok: true, user: toUser(row), tokenId: row.tokenId };
  }

  return {
    authenticate,
    async findByToken(token) {
      const result = await authenticate(token);
      return result.ok ? result.user : undefined;
    },
  };
}
