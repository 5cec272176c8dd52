import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { projects } from '../../core/db/schema/auth.js';
import { projectMemory, projectMemoryVersions } from '../../core/db/schema/memory.js';
import type { MemoryOverflow } from '../types.js';

/** Every SQL statement on project_memory and its versions, one named function each. */

export type MemoryRow = typeof projectMemory.$inferSelect;
export type MemoryVersionRow = typeof projectMemoryVersions.$inferSelect;

export async function projectExists(db: Db, projectId: string): Promise<boolean> {
  const [row] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId));
  return Boolean(row);
}

export async function selectMemory(db: Db, projectId: string): Promise<MemoryRow | undefined> {
  const [row] = await db.select().from(projectMemory).where(eq(projectMemory.projectId, projectId));
  return row;
}

/**
 * Inside a transaction: the project's memory row, created empty when missing, locked until the transaction
 * ends. Every write of one project's memory takes this lock first, so concurrent writes run one after the
 * other and each bumps the version the previous one left (no lost update, no gap, no duplicate version).
 */
export async function lockMemory(tx: Db, projectId: string): Promise<MemoryRow> {
  await tx.insert(projectMemory).values({ projectId }).onConflictDoNothing();
  const [row] = await tx.select().from(projectMemory).where(eq(projectMemory.projectId, projectId)).for('update');
  return row!;
}

export async function updateMemory(tx: Db, projectId: string, values: Partial<Omit<MemoryRow, 'projectId'>>): Promise<MemoryRow> {
  const [row] = await tx.update(projectMemory).set(values).where(eq(projectMemory.projectId, projectId)).returning();
  return row!;
}

export async function insertVersion(tx: Db, values: typeof projectMemoryVersions.$inferInsert): Promise<void> {
  await tx.insert(projectMemoryVersions).values(values);
}

export async function selectVersions(db: Db, projectId: string, limit: number): Promise<MemoryVersionRow[]> {
  return db.select().from(projectMemoryVersions).where(eq(projectMemoryVersions.projectId, projectId)).orderBy(desc(projectMemoryVersions.version)).limit(limit);
}

export async function selectVersion(db: Db, projectId: string, version: number): Promise<MemoryVersionRow | undefined> {
  const [row] = await db
    .select()
    .from(projectMemoryVersions)
    .where(and(eq(projectMemoryVersions.projectId, projectId), eq(projectMemoryVersions.version, version)))
    .orderBy(asc(projectMemoryVersions.id));
  return row;
}

export async function selectVersionRange(db: Db, projectId: string): Promise<{ first: number; last: number } | undefined> {
  const [row] = await db
    .select({ first: sql<number | null>`min(${projectMemoryVersions.version})`, last: sql<number | null>`max(${projectMemoryVersions.version})` })
    .from(projectMemoryVersions)
    .where(eq(projectMemoryVersions.projectId, projectId));
  return row?.first == null || row.last == null ? undefined : { first: Number(row.first), last: Number(row.last) };
}

export async function setOverflow(tx: Db, projectId: string, overflow: MemoryOverflow | null): Promise<void> {
  await tx.update(projectMemory).set({ overflow }).where(eq(projectMemory.projectId, projectId));
}

/** Moves the distillation watermark forward only: a slow run finishing late never re-opens turns a later run read. */
export async function advanceDistilledThrough(tx: Db, projectId: string, turnId: number): Promise<void> {
  await tx
    .insert(projectMemory)
    .values({ projectId, distilledThroughTurnId: turnId })
    .onConflictDoUpdate({
      target: projectMemory.projectId,
      set: { distilledThroughTurnId: sql`greatest(${projectMemory.distilledThroughTurnId}, excluded.distilled_through_turn_id)` },
    });
}
