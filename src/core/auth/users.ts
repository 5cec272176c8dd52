import { and, asc, eq, isNull } from 'drizzle-orm';
import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { ROLES, users, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { LoginCodeIssuer } from './login-codes.js';
import type { TokenIssuer } from './token-issuer.js';
import { findUser, iso, toUser, userNotFound, userRow, type UserRow } from './user-rows.js';
import { withTransaction } from '../db/transaction.js';

export interface User {
  id: string;
  name: string;
  role: Role;
}

/** A user as admins list them. */
export interface UserSummary extends User {
  createdAt: string;
  /** Set while the user is deactivated: their tokens answer 401 until an admin reactivates them. */
  deactivatedAt: string | null;
}

/** Who makes a change: a signed-in user, or the operator at the server's command line (who acts as admin). */
export type Actor = Pick<User, 'id' | 'name' | 'role'>;

/** Roles that may change data. Viewers read only. */
export const WRITER_ROLES: ReadonlySet<Role> = new Set(['admin', 'pi', 'data_manager', 'coordinator']);

/**
 * Roles that may close and reopen data queries (one by one, in bulk, or as verified against source). As in an EDC's
 * discrepancy workflow, the site (coordinator) answers a query and data management decides it is resolved.
 */
export const QUERY_CLOSER_ROLES: ReadonlySet<Role> = new Set(['admin', 'pi', 'data_manager']);

/** User accounts and their roles; tokens, sign-in codes and project membership have stores of their own. */
export interface UserStore {
  /**
   * Creates a user with a first bearer token (returned once) and audit entries for both: for scripts and tests that
   * act as the user. People get `invite` instead, so nobody but them ever holds their token.
   */
  create(input: { name: string; role: Role }, actor?: string): Promise<{ user: User; token: string }>;
  /**
   * Creates a user with a one-time sign-in code (what POST /api/users and the console hand out): the admin passes on
   * a link that works once and expires (login-codes.ts LOGIN_CODE_TTL_MS); the token it is exchanged for is the
   * user's own. Audited: the user's creation and the code's issue (never the code).
   */
  invite(input: { name: string; role: Role }, actor: string): Promise<{ user: User; loginCode: string; expiresAt: string }>;
  /** Admin: a new one-time sign-in code for an active user (the first one expired or was lost); audited. */
  issueSignInCode(userId: string, actor: Actor): Promise<{ user: User; loginCode: string; expiresAt: string }>;
  list(): Promise<UserSummary[]>;
  get(id: string): Promise<User | undefined>;
  /** Admin: changes a user's role; the last active admin cannot lose it. */
  setRole(userId: string, role: Role, actor: Actor): Promise<UserSummary>;
  /** Admin: the user's tokens stop working at once; the last active admin cannot be deactivated. */
  deactivate(userId: string, actor: Actor): Promise<UserSummary>;
  /** Admin: the user's unexpired, unrevoked tokens work again. */
  reactivate(userId: string, actor: Actor): Promise<UserSummary>;
}

const toSummary = (row: UserRow): UserSummary => ({ ...toUser(row), createdAt: row.createdAt.toISOString(), deactivatedAt: iso(row.deactivatedAt) });

const unknownRole = (role: string) => new ClinAgentError('VALIDATION_FAILED', `Unknown role "${role}". Use one of: ${ROLES.join(', ')}.`, { field: 'role' });

const nameTaken = (name: string) => new ClinAgentError('CONFLICT_STATE', `A user named "${name}" already exists. Choose another name.`, { field: 'name' });

function assertAdmin(actor: Actor): void {
  if (actor.role !== 'admin') throw new ClinAgentError('FORBIDDEN', `Only admins may change users; your role is "${actor.role}". Ask an admin.`, { role: actor.role, needs: ['admin'] });
}

export function createUserStore(db: Db, deps: { issueToken: TokenIssuer; issueLoginCode: LoginCodeIssuer }): UserStore {
  /** The user row and its audit entry, on `tx`, so the first credential commits with it or not at all. */
  async function insertUser(tx: Db, name: string, role: Role, actor: string): Promise<User> {
    const [row] = await tx.insert(users).values({ name, role }).onConflictDoNothing().returning();
    if (!row) throw nameTaken(name);
    const user = toUser(row);
    await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'user', entityId: user.id, action: 'created', actor, newValue: { name, role } });
    return user;
  }

  async function assertNew(name: string, role: Role): Promise<void> {
    if (!ROLES.includes(role)) throw unknownRole(role);
    const [existing] = await db.select({ id: users.id }).from(users).where(eq(users.name, name));
    if (existing) throw nameTaken(name);
  }

  /**
   * Every change of a user first locks the active admin rows, in id order, then the user's row: two admins
   * demoting each other at the same moment then run one after the other, and the second sees one admin
   * left, instead of both succeeding (no admin at all) or deadlocking on PostgreSQL.
   */
  async function changeUser(
    userId: string,
    actor: Actor,
    change: { what: string; removesAdmin: (row: UserRow) => boolean; set: (row: UserRow) => Partial<UserRow> | undefined; action: string; audit: (before: UserRow, after: UserRow) => { oldValue: unknown; newValue: unknown } },
  ): Promise<UserSummary> {
    assertAdmin(actor);
    if (!isUuid(userId)) throw userNotFound(userId);
    return withTransaction(db, async (tx) => {
      const admins = await tx.select({ id: users.id }).from(users).where(and(eq(users.role, 'admin'), isNull(users.deactivatedAt))).orderBy(asc(users.id)).for('update');
      const current = await userRow(tx, userId, true);
      if (change.removesAdmin(current) && admins.length <= 1 && admins.some((a) => a.id === current.id)) {
        throw new ClinAgentError('CONFLICT_STATE', `"${current.name}" is the last active admin; ${change.what} would leave nobody able to manage users. Make another user admin first (PATCH /api/users/:id with {"role":"admin"}).`, { userId, reason: 'last_active_admin' });
      }
      const values = change.set(current);
      // Nothing to change (already that role, already deactivated): no write, no audit entry.
      if (!values) return toSummary(current);
      const [after] = await tx.update(users).set(values).where(eq(users.id, userId)).returning();
      await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'user', entityId: userId, action: change.action, actor: actor.name, ...change.audit(current, after!) });
      return toSummary(after!);
    });
  }

  return {
    async create({ name, role }, actor = 'system') {
      await assertNew(name, role);
      return withTransaction(db, async (tx) => {
        const user = await insertUser(tx, name, role, actor);
        const { token } = await deps.issueToken(tx, user, 'created with user', actor);
        return { user, token };
      });
    },

    async invite({ name, role }, actor) {
      await assertNew(name, role);
      return withTransaction(db, async (tx) => {
        const user = await insertUser(tx, name, role, actor);
        const { code, expiresAt } = await deps.issueLoginCode(tx, user, actor);
        return { user, loginCode: code, expiresAt };
      });
    },

    async issueSignInCode(userId, actor) {
      assertAdmin(actor);
      if (!isUuid(userId)) throw userNotFound(userId);
      return withTransaction(db, async (tx) => {
        const row = await userRow(tx, userId, true);
        if (row.deactivatedAt) {
          throw new ClinAgentError('CONFLICT_STATE', `"${row.name}" is deactivated, so a sign-in link would not work. Reactivate them first (POST /api/users/${userId}/reactivate).`, { userId, reason: 'deactivated' });
        }
        const user = toUser(row);
        const { code, expiresAt } = await deps.issueLoginCode(tx, user, actor.name);
        return { user, loginCode: code, expiresAt };
      });
    },

    async list() {
      return (await db.select().from(users).orderBy(users.createdAt)).map(toSummary);
    },

    get: (id) => findUser(db, id),

    async setRole(userId, role, actor) {
      if (!ROLES.includes(role)) throw unknownRole(role);
      return changeUser(userId, actor, {
        what: `changing their role to ${role}`,
        removesAdmin: (row) => row.role === 'admin' && role !== 'admin',
        set: (row) => (row.role === role ? undefined : { role }),
        action: 'role_changed',
        audit: (before, after) => ({ oldValue: { role: before.role }, newValue: { role: after.role } }),
      });
    },

    async deactivate(userId, actor) {
      return changeUser(userId, actor, {
        what: 'deactivating them',
        removesAdmin: (row) => row.role === 'admin' && !row.deactivatedAt,
        set: (row) => (row.deactivatedAt ? undefined : { deactivatedAt: new Date() }),
        action: 'deactivated',
        audit: (_before, after) => ({ oldValue: { deactivatedAt: null }, newValue: { deactivatedAt: iso(after.deactivatedAt) } }),
      });
    },

    async reactivate(userId, actor) {
      return changeUser(userId, actor, {
        what: 'reactivating them',
        removesAdmin: () => false,
        set: (row) => (row.deactivatedAt ? { deactivatedAt: null } : undefined),
        action: 'reactivated',
        audit: (before) => ({ oldValue: { deactivatedAt: iso(before.deactivatedAt) }, newValue: { deactivatedAt: null } }),
      });
    },
  };
}
