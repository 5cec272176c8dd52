import { and, asc, desc, eq, gt, isNull, lt, or } from 'drizzle-orm';
import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { apiTokens, loginCodes, projectMembers, projects, ROLES, users, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import { generateToken, hashToken } from './tokens.js';

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

/** Who makes a change: a signed-in user, or the operator at the server's command line (who acts as admin). */
export type Actor = Pick<User, 'id' | 'name' | 'role'>;

/** Why a bearer token was refused; the access hook turns each into a message saying how to get a working one. */
export type Authentication =
  | { ok: true; user: User; tokenId: string }
  | { ok: false; reason: 'unknown' }
  | { ok: false; reason: 'revoked' | 'expired' | 'deactivated'; at: string };

/** Roles that may change data. Viewers read only. */
export const WRITER_ROLES: ReadonlySet<Role> = new Set(['admin', 'pi', 'coordinator']);

/** A one-time sign-in code is valid this long: long enough to open the link, short enough to be useless if leaked later. */
const LOGIN_CODE_TTL_MS = 24 * 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * `last_used_at` is written at most this often per token: every request writing a row would double the
 * database work of a busy console, and "used in the last minute" is as precise as anyone reading it needs.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

export const DEFAULT_TOKEN_TTL_DAYS = 30;

export interface UserStore {
  /** Checks a bearer token; says why when it does not work. Records when the token was last used. */
  authenticate(token: string): Promise<Authentication>;
  /** The user of a working token, or undefined. */
  findByToken(token: string): Promise<User | undefined>;
  create(input: { name: string; role: Role }, actor?: string): Promise<{ user: User; token: string }>;
  list(): Promise<UserSummary[]>;
  get(id: string): Promise<User | undefined>;
  issueToken(userId: string, options?: { label?: string; actor?: string }): Promise<{ token: string; info: TokenInfo }>;
  /** A user's tokens, newest first. Admins may list anyone's; others only their own (else NOT_FOUND). */
  listTokens(userId: string, reader: Actor): Promise<TokenInfo[]>;
  /** Revokes a token at once. Admins may revoke any; others only their own (else NOT_FOUND). */
  revokeToken(tokenId: string, actor: Actor): Promise<TokenInfo>;
  /** Admin: changes a user's role; the last active admin cannot lose it. */
  setRole(userId: string, role: Role, actor: Actor): Promise<UserSummary>;
  /** Admin: the user's tokens stop working at once; the last active admin cannot be deactivated. */
  deactivate(userId: string, actor: Actor): Promise<UserSummary>;
  /** Admin: the user's unexpired, unrevoked tokens work again. */
  reactivate(userId: string, actor: Actor): Promise<UserSummary>;
  issueLoginCode(userId: string): Promise<string>;
  exchangeLoginCode(code: string): Promise<{ user: User; token: string }>;
  /** First start: makes sure an admin can sign in. Returns a login code when one was issued. */
  bootstrapAdmin(adminToken?: string): Promise<{ created: boolean; loginCode?: string }>;
  projectIds(userId: string): Promise<string[]>;
  /** Creates a project with its audit entry (who created it). */
  createProject(input: { id: string; name: string }, actor?: string): Promise<{ id: string; name: string }>;
  listProjects(user: User): Promise<Array<{ id: string; name: string }>>;
  /** Adds a user to a project with its audit entry; adding a member twice changes and records nothing. */
  addMember(projectId: string, userId: string, actor?: string): Promise<void>;
  isMember(projectId: string, user: User): Promise<boolean>;
}

type UserRow = typeof users.$inferSelect;
type TokenRow = typeof apiTokens.$inferSelect;

const toUser = (row: { id: string; name: string; role: string }): User => ({ id: row.id, name: row.name, role: row.role as Role });
const toSummary = (row: UserRow): UserSummary => ({ ...toUser(row), createdAt: row.createdAt.toISOString(), deactivatedAt: row.deactivatedAt?.toISOString() ?? null });
const iso = (date: Date | null) => date?.toISOString() ?? null;
const toTokenInfo = (row: TokenRow): TokenInfo => ({
  id: row.id,
  userId: row.userId,
  label: row.label,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: iso(row.lastUsedAt),
  expiresAt: iso(row.expiresAt),
  revokedAt: iso(row.revokedAt),
});

const userNotFound = (id: string) => new ClinAgentError('NOT_FOUND', `User "${id}" does not exist. Check the id (GET /api/users).`, { userId: id });

export function createUserStore(db: Db, options: { tokenTtlDays?: number } = {}): UserStore {
  const tokenTtlMs = (options.tokenTtlDays ?? DEFAULT_TOKEN_TTL_DAYS) * DAY_MS;

  /** Inserts a token and its audit entry on `tx`, so both commit together. */
  async function insertToken(tx: Db, user: Pick<User, 'id' | 'name'>, label: string, actor: string): Promise<{ token: string; info: TokenInfo }> {
    const token = generateToken();
    const [row] = await tx.insert(apiTokens).values({ userId: user.id, tokenHash: hashToken(token), label, expiresAt: new Date(Date.now() + tokenTtlMs) }).returning();
    const info = toTokenInfo(row!);
    await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'token', entityId: info.id, action: 'issued', actor, newValue: { userId: user.id, userName: user.name, label, expiresAt: info.expiresAt } });
    return { token, info };
  }

  async function userRow(tx: Db, id: string, lock = false): Promise<UserRow> {
    if (!isUuid(id)) throw userNotFound(id);
    const query = tx.select().from(users).where(eq(users.id, id));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw userNotFound(id);
    return row;
  }

  function assertAdmin(actor: Actor): void {
    if (actor.role !== 'admin') throw new ClinAgentError('FORBIDDEN', `Only admins may change users; your role is "${actor.role}". Ask an admin.`, { role: actor.role, needs: ['admin'] });
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
    return db.transaction(async (txRaw) => {
      const tx = txRaw as unknown as Db;
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

  const store: UserStore = {
    async authenticate(token) {
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
    },

    async findByToken(token) {
      const result = await store.authenticate(token);
      return result.ok ? result.user : undefined;
    },

    async create({ name, role }, actor = 'system') {
      if (!ROLES.includes(role)) {
        throw new ClinAgentError('VALIDATION_FAILED', `Unknown role "${role}". Use one of: ${ROLES.join(', ')}.`, { field: 'role' });
      }
      const [existing] = await db.select({ id: users.id }).from(users).where(eq(users.name, name));
      if (existing) throw new ClinAgentError('CONFLICT_STATE', `A user named "${name}" already exists. Choose another name.`, { field: 'name' });
      return db.transaction(async (txRaw) => {
        const tx = txRaw as unknown as Db;
        const [row] = await tx.insert(users).values({ name, role }).onConflictDoNothing().returning();
        if (!row) throw new ClinAgentError('CONFLICT_STATE', `A user named "${name}" already exists. Choose another name.`, { field: 'name' });
        const user = toUser(row);
        await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'user', entityId: user.id, action: 'created', actor, newValue: { name, role } });
        const { token } = await insertToken(tx, user, 'created with user', actor);
        return { user, token };
      });
    },

    async list() {
      return (await db.select().from(users).orderBy(users.createdAt)).map(toSummary);
    },

    async get(id) {
      if (!isUuid(id)) return undefined;
      const [row] = await db.select().from(users).where(eq(users.id, id));
      return row ? toUser(row) : undefined;
    },

    async issueToken(userId, { label = '', actor = 'system' } = {}) {
      return db.transaction(async (txRaw) => {
        const tx = txRaw as unknown as Db;
        const row = await userRow(tx, userId);
        if (row.deactivatedAt) {
          throw new ClinAgentError('CONFLICT_STATE', `User "${row.name}" is deactivated, so a new token would not work. Reactivate them first (POST /api/users/${row.id}/reactivate).`, { userId, reason: 'deactivated' });
        }
        return insertToken(tx, row, label, actor);
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
      return db.transaction(async (txRaw) => {
        const tx = txRaw as unknown as Db;
        const [row] = await tx.select().from(apiTokens).where(eq(apiTokens.id, tokenId)).for('update');
        if (!row || (actor.role !== 'admin' && row.userId !== actor.id)) throw notFound();
        // Revoking twice changes nothing and records nothing: the first revocation stands.
        if (row.revokedAt) return toTokenInfo(row);
        const [revoked] = await tx.update(apiTokens).set({ revokedAt: new Date() }).where(eq(apiTokens.id, tokenId)).returning();
        await appendAudit(tx, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'token', entityId: tokenId, action: 'revoked', actor: actor.name, oldValue: { revokedAt: null }, newValue: { userId: row.userId, label: row.label, revokedAt: revoked!.revokedAt!.toISOString() } });
        return toTokenInfo(revoked!);
      });
    },

    async setRole(userId, role, actor) {
      if (!ROLES.includes(role)) throw new ClinAgentError('VALIDATION_FAILED', `Unknown role "${role}". Use one of: ${ROLES.join(', ')}.`, { field: 'role' });
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

    async issueLoginCode(userId) {
      const code = generateToken('login_');
      await db.insert(loginCodes).values({ codeHash: hashToken(code), userId, expiresAt: new Date(Date.now() + LOGIN_CODE_TTL_MS) });
      return code;
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
        throw new ClinAgentError('UNAUTHENTICATED', 'This sign-in link is invalid, expired or already used. Ask an admin for a new one (`clinagent login-link`).');
      }
      const [row] = await db.select().from(users).where(eq(users.id, used.userId));
      if (!row) throw new ClinAgentError('UNAUTHENTICATED', 'The user of this sign-in link no longer exists.');
      if (row.deactivatedAt) throw new ClinAgentError('UNAUTHENTICATED', `The account "${row.name}" is deactivated. Ask an admin to reactivate it.`, { reason: 'deactivated' });
      const user = toUser(row);
      const { token } = await db.transaction((tx) => insertToken(tx as unknown as Db, user, 'sign-in link', user.name));
      return { user, token };
    },

    async bootstrapAdmin(adminToken) {
      const [admin] = await db.select({ id: users.id }).from(users).where(and(eq(users.role, 'admin'), isNull(users.deactivatedAt))).orderBy(users.createdAt).limit(1);
      const [anyUser] = await db.select({ id: users.id }).from(users).limit(1);
      // Only an empty database gets an admin on its own; otherwise CLINAGENT_ADMIN_TOKEN or the CLI decides.
      if (!admin && anyUser && !adminToken) return { created: false };
      let adminId = admin?.id;
      if (!adminId) {
        const name = anyUser ? `admin-${Date.now()}` : 'admin';
        adminId = await db.transaction(async (tx) => {
          const [row] = await tx.insert(users).values({ name, role: 'admin' }).returning({ id: users.id });
          await appendAudit(tx as unknown as Db, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'user', entityId: row!.id, action: 'created', actor: 'system', newValue: { name, role: 'admin' }, reason: 'first start' });
          return row!.id;
        });
      }
      if (adminToken) {
        // The token from the environment never expires: automation that holds it must not break after 30 days.
        await db.transaction(async (tx) => {
          const [row] = await tx.insert(apiTokens).values({ userId: adminId, tokenHash: hashToken(adminToken), label: 'CLINAGENT_ADMIN_TOKEN', expiresAt: null }).onConflictDoNothing().returning({ id: apiTokens.id });
          if (row) await appendAudit(tx as unknown as Db, { projectId: PLATFORM_AUDIT_SCOPE, entityType: 'token', entityId: row.id, action: 'issued', actor: 'system', newValue: { userId: adminId, label: 'CLINAGENT_ADMIN_TOKEN', expiresAt: null } });
        });
        return { created: !admin };
      }
      return admin ? { created: false } : { created: true, loginCode: await store.issueLoginCode(adminId) };
    },

    async projectIds(userId) {
      if (!isUuid(userId)) return [];
      return (await db.select({ id: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, userId))).map((r) => r.id);
    },

    async createProject({ id, name }, actor = 'system') {
      return db.transaction(async (txRaw) => {
        const tx = txRaw as unknown as Db;
        const [row] = await tx.insert(projects).values({ id, name }).onConflictDoNothing().returning({ id: projects.id, name: projects.name });
        if (!row) throw new ClinAgentError('CONFLICT_STATE', `A project with id "${id}" already exists. Choose another id.`, { field: 'id' });
        await appendAudit(tx, { projectId: id, entityType: 'project', entityId: id, action: 'project.create', actor, newValue: { name } });
        return row;
      });
    },

    async listProjects(user) {
      if (user.role === 'admin') return db.select({ id: projects.id, name: projects.name }).from(projects).orderBy(projects.id);
      return db
        .select({ id: projects.id, name: projects.name })
        .from(projects)
        .innerJoin(projectMembers, eq(projectMembers.projectId, projects.id))
        .where(eq(projectMembers.userId, user.id))
        .orderBy(projects.id);
    },

    async addMember(projectId, userId, actor = 'system') {
      const [project] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId));
      if (!project) throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist. Check the id (GET /api/projects).`, { projectId });
      const member = await store.get(userId);
      if (!member) throw userNotFound(userId);
      await db.transaction(async (txRaw) => {
        const tx = txRaw as unknown as Db;
        const added = await tx.insert(projectMembers).values({ projectId, userId }).onConflictDoNothing().returning({ userId: projectMembers.userId });
        if (added.length) await appendAudit(tx, { projectId, entityType: 'member', entityId: userId, action: 'member.add', actor, newValue: { userId, userName: member.name, role: member.role } });
      });
    },

    async isMember(projectId, user) {
      if (user.role === 'admin') return true;
      const [row] = await db
        .select({ projectId: projectMembers.projectId })
        .from(projectMembers)
        .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, user.id)));
      return Boolean(row);
    },
  };
  return store;
}
