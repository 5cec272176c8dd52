import { eq } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { users, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { User } from './users.js';

/** The row behind a user; shared by the auth stores so each reads users the same way. */
export type UserRow = typeof users.$inferSelect;

export const toUser = (row: { id: string; name: string; role: string }): User => ({ id: row.id, name: row.name, role: row.role as Role });

export const iso = (date: Date | null) => date?.toISOString() ?? null;

export const userNotFound = (id: string) => new ClinAgentError('NOT_FOUND', `User "${id}" does not exist. Check the id (GET /api/users).`, { userId: id });

/** The user's row, locked for update when `lock`; NOT_FOUND for an unknown or malformed id. */
export async function userRow(tx: Db, id: string, lock = false): Promise<UserRow> {
  if (!isUuid(id)) throw userNotFound(id);
  const query = tx.select().from(users).where(eq(users.id, id));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw userNotFound(id);
  return row;
}

/** The user, or undefined for an unknown or malformed id. */
export async function findUser(db: Db, id: string): Promise<User | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.select().from(users).where(eq(users.id, id));
  return row ? toUser(row) : undefined;
}
