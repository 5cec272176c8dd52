import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { apiTokens, loginCodes, projectMembers, projects, ROLES, users, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { generateToken, hashToken } from './tokens.js';

export interface User {
  id: string;
  name: string;
  role: Role;
}

/** Roles that may change data. Viewers read only. */
export const WRITER_ROLES: ReadonlySet<Role> = new Set(['admin', 'pi', 'coordinator']);

/** A one-time sign-in code is valid this long: long enough to open the link, short enough to be useless if leaked later. */
const LOGIN_CODE_TTL_MS = 24 * 60 * 60 * 1000;

export interface UserStore {
  findByToken(token: string): Promise<User | undefined>;
  create(input: { name: string; role: Role }): Promise<{ user: User; token: string }>;
  list(): Promise<User[]>;
  get(id: string): Promise<User | undefined>;
  issueToken(userId: string, label?: string): Promise<string>;
  issueLoginCode(userId: string): Promise<string>;
  exchangeLoginCode(code: string): Promise<{ user: User; token: string }>;
  /** First start: makes sure an admin can sign in. Returns a login code when one was issued. */
  bootstrapAdmin(adminToken?: string): Promise<{ created: boolean; loginCode?: string }>;
  projectIds(userId: string): Promise<string[]>;
  createProject(input: { id: string; name: string }): Promise<{ id: string; name: string }>;
  listProjects(user: User): Promise<Array<{ id: string; name: string }>>;
  addMember(projectId: string, userId: string): Promise<void>;
  isMember(projectId: string, user: User): Promise<boolean>;
}

export function createUserStore(db: Db): UserStore {
  const toUser = (row: { id: string; name: string; role: string }): User => ({ id: row.id, name: row.name, role: row.role as Role });

  const store: UserStore = {
    async findByToken(token) {
      const [row] = await db
        .select({ id: users.id, name: users.name, role: users.role, tokenId: apiTokens.id })
        .from(apiTokens)
        .innerJoin(users, eq(users.id, apiTokens.userId))
        .where(and(eq(apiTokens.tokenHash, hashToken(token)), isNull(apiTokens.revokedAt)));
      return row ? toUser(row) : undefined;
    },

    async create({ name, role }) {
      if (!ROLES.includes(role)) {
        throw new ClinAgentError('VALIDATION_FAILED', `Unknown role "${role}". Use one of: ${ROLES.join(', ')}.`, { field: 'role' });
      }
      const [existing] = await db.select({ id: users.id }).from(users).where(eq(users.name, name));
      if (existing) throw new ClinAgentError('CONFLICT_STATE', `A user named "${name}" already exists. Choose another name.`, { field: 'name' });
      const [row] = await db.insert(users).values({ name, role }).returning();
      const user = toUser(row!);
      return { user, token: await store.issueToken(user.id, 'created with user') };
    },

    async list() {
      return (await db.select().from(users).orderBy(users.createdAt)).map(toUser);
    },

    async get(id) {
      if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
      const [row] = await db.select().from(users).where(eq(users.id, id));
      return row ? toUser(row) : undefined;
    },

    async issueToken(userId, label = '') {
      const token = generateToken();
      await db.insert(apiTokens).values({ userId, tokenHash: hashToken(token), label });
      return token;
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
      const user = await store.get(used.userId);
      if (!user) throw new ClinAgentError('UNAUTHENTICATED', 'The user of this sign-in link no longer exists.');
      return { user, token: await store.issueToken(user.id, 'sign-in link') };
    },

    async bootstrapAdmin(adminToken) {
      const [admin] = await db.select({ id: users.id }).from(users).where(eq(users.role, 'admin')).limit(1);
      const [anyUser] = await db.select({ id: users.id }).from(users).limit(1);
      // Only an empty database gets an admin on its own; otherwise CLINAGENT_ADMIN_TOKEN or the CLI decides.
      if (!admin && anyUser && !adminToken) return { created: false };
      let adminId = admin?.id;
      if (!adminId) {
        const [row] = await db.insert(users).values({ name: anyUser ? `admin-${Date.now()}` : 'admin', role: 'admin' }).returning({ id: users.id });
        adminId = row!.id;
      }
      if (adminToken) {
        await db.insert(apiTokens).values({ userId: adminId, tokenHash: hashToken(adminToken), label: 'CLINAGENT_ADMIN_TOKEN' }).onConflictDoNothing();
        return { created: !admin };
      }
      return admin ? { created: false } : { created: true, loginCode: await store.issueLoginCode(adminId) };
    },

    async projectIds(userId) {
      return (await db.select({ id: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, userId))).map((r) => r.id);
    },

    async createProject({ id, name }) {
      const [row] = await db.insert(projects).values({ id, name }).onConflictDoNothing().returning({ id: projects.id, name: projects.name });
      if (!row) throw new ClinAgentError('CONFLICT_STATE', `A project with id "${id}" already exists. Choose another id.`, { field: 'id' });
      return row;
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

    async addMember(projectId, userId) {
      const [project] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId));
      if (!project) throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist. Check the id (GET /api/projects).`, { projectId });
      if (!(await store.get(userId))) throw new ClinAgentError('NOT_FOUND', `User "${userId}" does not exist. Check the id (GET /api/users).`, { userId });
      await db.insert(projectMembers).values({ projectId, userId }).onConflictDoNothing();
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
