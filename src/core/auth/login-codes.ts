import { and, eq, gt, isNull } from 'drizzle-orm';
import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { loginCodes, users } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import type { TokenIssuer } from './token-issuer.js';
import { generateToken, hashToken } from './tokens.js';
import { toUser } from './user-rows.js';
import type { User } from './users.js';
import { withTransaction } from '../db/transaction.js';

/** A one-time sign-in code is valid this long: long enough to open the link, short enough to be useless if leaked later. */
export const LOGIN_CODE_TTL_MS = 24 * 60 * 60 * 1000;

/** The path of the console that exchanges a code (web/src/stores/session.ts reads `?login=`); prefixed with the server's origin. */
export const signInPath = (code: string): string => `/?login=${encodeURIComponent(code)}`;

/**
 * Issues a one-time sign-in code for a user on `tx`, with its audit entry, so both commit with whatever the caller
 * does in the same transaction (a new user). What an admin hands a user instead of a bearer token: the code works
 * once and for LOGIN_CODE_TTL_MS; the token it is exchanged for is the user's alone and never seen by the admin.
 */
export type LoginCodeIssuer = (tx: Db, user: Pick<User, 'id' | 'name'>, actor: string) => Promise<{ code: string; expiresAt: string }>;

export const issueLoginCodeIn: LoginCodeIssuer = async (tx, user, actor) => {
  const { code, expiresAt } = await insertLoginCode(tx, user.id);
  // Never the code: the audit trail is readable by admins, and a code read there could still be used.
  await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'user', entityId: user.id, action: 'sign_in_link_issued', actor, newValue: { userName: user.name, expiresAt: expiresAt.toISOString() } });
  return { code, expiresAt: expiresAt.toISOString() };
};

/** A new code's row: only its hash is stored, so the database (or a copy of it) never holds a usable code. */
async function insertLoginCode(db: Db, userId: string): Promise<{ code: string; expiresAt: Date }> {
  const code = generateToken('login_');
  const expiresAt = new Date(Date.now() + LOGIN_CODE_TTL_MS);
  await db.insert(loginCodes).values({ codeHash: hashToken(code), userId, expiresAt });
  return { code, expiresAt };
}

/** One-time sign-in links (printed at first start and by `clinagent login-link`), each exchanged once for a token. */
export interface LoginCodeStore {
  issueLoginCode(userId: string): Promise<string>;
  exchangeLoginCode(code: string): Promise<{ user: User; token: string }>;
}

export function createLoginCodeStore(db: Db, deps: { issueToken: TokenIssuer }): LoginCodeStore {
  return {
    async issueLoginCode(userId) {
      return (await insertLoginCode(db, userId)).code;
    },

    async exchangeLoginCode(code) {
      // Marking the code used in the same statement that checks it makes a replayed link fail even
      // when two requests race.
      const [used] = await db
        .update(loginCodes)
        .set({ usedAt: new Date() })
        .where(and(eq(loginCodes.codeHash, hashToken(code)), isNull(loginCodes.usedAt), gt(loginCodes.expiresAt, new Date())))
        .returning({ userId: loginCodes.userId });
      if (!used) {
        throw new ClinAgentError('UNAUTHENTICATED', 'This sign-in link is invalid, expired or already used. Ask an admin for a new one (Users page, "New sign-in link"; for the first admin, `clinagent login-link`).');
      }
      const [row] = await db.select().from(users).where(eq(users.id, used.userId));
      if (!row) throw new ClinAgentError('UNAUTHENTICATED', 'The user of this sign-in link no longer exists.');
      if (row.deactivatedAt) throw new ClinAgentError('UNAUTHENTICATED', `The account "${row.name}" is deactivated. Ask an admin to reactivate it.`, { reason: 'deactivated' });
      const user = toUser(row);
      const { token } = await withTransaction(db, (tx) => deps.issueToken(tx, user, 'sign-in link', user.name));
      return { user, token };
    },
  };
}
