import { sql } from 'drizzle-orm';
import { boolean, check, index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Platform roles, from most to least privileged. Admins manage users; viewers only read. A data manager reviews
 * QC findings and closes (or reopens) queries; a coordinator is the site, which answers them.
 */
export const ROLES = ['admin', 'pi', 'data_manager', 'coordinator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
/** A role a member can have in one project (project_members.role): admin is platform-wide only. */
export const PROJECT_ROLES = ['pi', 'data_manager', 'coordinator', 'viewer'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  role: text('role').$type<Role>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  /** A deactivated user's tokens stop working at once; the row stays for the audit trail. */
  deactivatedAt: timestamp('deactivated_at', { withTimezone: true }),
});

/** Bearer tokens, stored only as SHA-256 hashes: a leaked database does not leak working credentials. */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    label: text('label').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** Null: never expires (the admin token from the environment); user tokens default to 30 days. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_tokens_user_idx').on(t.userId)],
);

/** One-time sign-in codes (the link printed at first start); exchanged once for an API token. */
export const loginCodes = pgTable('login_codes', {
  codeHash: text('code_hash').primaryKey(),
  userId: uuid('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  usedAt: timestamp('used_at', { withTimezone: true }),
});

export const projects = pgTable('projects', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const projectMembers = pgTable(
  'project_members',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    addedAt: timestamp('added_at', { withTimezone: true }).notNull().defaultNow(),
    /** Coordinators and viewers see identifier fields masked unless an admin grants them this. */
    canViewIdentifiers: boolean('can_view_identifiers').notNull().default(false),
    /**
     * The member's role in this project; null: their platform role (users.role). Admin is platform-wide only: an
     * admin belongs to every project with every right, so it is never a project role.
     */
    role: text('role').$type<ProjectRole>(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), check('project_members_role_check', sql`${t.role} IS NULL OR ${t.role} IN ('pi', 'data_manager', 'coordinator', 'viewer')`)],
);

/**
 * REDCap API access per project. The token itself is never stored: `tokenEnv` names the server environment
 * variable that holds it, so a database dump or a writer of another project can never use it.
 */
export const projectRedcap = pgTable('project_redcap', {
  projectId: text('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  apiUrl: text('api_url').notNull(),
  tokenEnv: text('token_env').notNull(),
  updatedBy: text('updated_by').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
