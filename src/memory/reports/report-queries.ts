import { and, asc, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { appendAudit } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { conversations, conversationTurns } from '../../core/db/schema/conversations.js';
import { memoryReports, type MemoryReportKind } from '../../core/db/schema/memory.js';
import type { MemoryReportView } from '../types.js';
import { addWeeks, isPartialWeek } from './iso-week.js';
import { withTransaction } from '../../core/db/transaction.js';

/** Every SQL statement of the reports store, one named function each. */

export type ReportRow = typeof memoryReports.$inferSelect;

export interface LogTurn {
  id: number;
  conversationId: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: Date;
}

/** Where a report's period ends: the week's (or year's) end, or for a report of the week so far, when it was made. */
function periodEnd(row: ReportRow, partial: boolean): Date {
  if (partial) return row.updatedAt;
  if (row.kind === 'year') return new Date(`${Number(row.label) + 1}-01-01T00:00:00Z`);
  return addWeeks(new Date(`${row.periodStart}T00:00:00Z`), 1);
}

export function toView(row: ReportRow): MemoryReportView {
  const partial = isPartialWeek(row);
  return {
    id: row.id,
    projectId: row.projectId,
    kind: row.kind,
    periodStart: row.periodStart,
    periodEnd: periodEnd(row, partial).toISOString(),
    partial,
    label: row.label,
    summary: row.summary,
    tokens: row.tokens,
    sourceCount: row.sourceCount,
    generatedBy: row.generatedBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * What a person and the assistant said in the project's conversations: tool turns are left out because they
 * carry record data (identifiers included), and assistant turns that only called a tool have no text.
 */
const spokenTurn = and(inArray(conversationTurns.role, ['user', 'assistant']), sql`btrim(${conversationTurns.content}) <> ''`);

/** The project's spoken turns of [start, end), oldest first. */
export async function selectLogTurns(db: Db, projectId: string, start: Date, end: Date): Promise<LogTurn[]> {
  const rows = await db
    .select({ id: conversationTurns.id, conversationId: conversationTurns.conversationId, role: conversationTurns.role, content: conversationTurns.content, createdAt: conversationTurns.createdAt })
    .from(conversationTurns)
    .innerJoin(conversations, eq(conversations.id, conversationTurns.conversationId))
    .where(and(eq(conversations.projectId, projectId), spokenTurn, gte(conversationTurns.createdAt, start), lt(conversationTurns.createdAt, end)))
    .orderBy(asc(conversationTurns.createdAt), asc(conversationTurns.id));
  return rows as LogTurn[];
}

/** Mondays (YYYY-MM-DD, UTC) of the weeks before `before` in which the project has spoken turns, oldest first. */
export async function selectWeeksWithTurns(db: Db, projectId: string, before: Date): Promise<string[]> {
  // date_trunc('week') is ISO: it goes back to Monday. Taken in UTC so it agrees with iso-week.ts.
  const weekStart = sql<string>`to_char(date_trunc('week', ${conversationTurns.createdAt} AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
  const rows = await db
    .selectDistinct({ weekStart })
    .from(conversationTurns)
    .innerJoin(conversations, eq(conversations.id, conversationTurns.conversationId))
    .where(and(eq(conversations.projectId, projectId), spokenTurn, lt(conversationTurns.createdAt, before)));
  return rows.map((r) => r.weekStart).sort();
}

export async function selectProjectsWithTurns(db: Db): Promise<string[]> {
  const rows = await db
    .selectDistinct({ projectId: conversations.projectId })
    .from(conversations)
    .where(and(sql`${conversations.projectId} is not null`, sql`exists (select 1 from ${conversationTurns} where ${conversationTurns.conversationId} = ${conversations.id})`));
  return rows.map((r) => r.projectId!).sort();
}

export async function selectReports(db: Db, projectId: string, options: { kind?: MemoryReportKind; limit: number }): Promise<ReportRow[]> {
  return db
    .select()
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), options.kind === undefined ? undefined : eq(memoryReports.kind, options.kind)))
    .orderBy(desc(memoryReports.periodStart), desc(memoryReports.kind))
    .limit(options.limit);
}

/** Mondays of the weeks with a full report; a report of a week so far does not count, so the job replaces it. */
export async function selectFullyReportedWeeks(db: Db, projectId: string): Promise<Set<string>> {
  const rows = await db
    .select({ kind: memoryReports.kind, periodStart: memoryReports.periodStart, updatedAt: memoryReports.updatedAt })
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'week')));
  return new Set(rows.filter((row) => !isPartialWeek(row)).map((row) => row.periodStart));
}

/** The newest `limit` weekly reports, newest first: the window a history question reads. */
export async function selectNewestWeeks(db: Db, projectId: string, limit: number): Promise<ReportRow[]> {
  return db
    .select()
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'week')))
    .orderBy(desc(memoryReports.periodStart))
    .limit(limit);
}

const weekYear = sql<string>`substr(${memoryReports.label}, 1, 4)`;

/** Exact to the microsecond (a float8 holds these integers exactly), where a JS Date would cut to milliseconds. */
const micros = (timestamp: SQL) => sql<number>`(extract(epoch from ${timestamp}) * 1000000)::float8`;

/** The Monday of the oldest week in the newest `weeks` weekly reports; undefined while there are fewer. */
export async function selectWindowStart(db: Db, projectId: string, weeks: number): Promise<string | undefined> {
  const [row] = await db
    .select({ periodStart: memoryReports.periodStart })
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'week')))
    .orderBy(desc(memoryReports.periodStart))
    .offset(weeks - 1)
    .limit(1);
  return row?.periodStart;
}

/** ISO years (from the label) of the weekly reports older than `periodStart`. */
export async function selectYearsOfWeeksBefore(db: Db, projectId: string, periodStart: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ year: weekYear })
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'week'), lt(memoryReports.periodStart, periodStart)));
  return rows.map((r) => r.year).sort();
}

/** Per ISO year: how many weekly reports it has and when the newest change to one of them was made. */
export async function selectWeekStats(db: Db, projectId: string, years: readonly string[]): Promise<Array<{ year: string; weeks: number; newestMicros: number }>> {
  if (!years.length) return [];
  const rows = await db
    .select({ year: weekYear, weeks: sql<number>`count(*)::int`, newestMicros: micros(sql`max(${memoryReports.updatedAt})`) })
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'week'), inArray(weekYear, [...years])))
    .groupBy(weekYear);
  return rows.map((r) => ({ year: r.year, weeks: Number(r.weeks), newestMicros: Number(r.newestMicros) }));
}

/** What the stored yearly summaries were built from and when. */
export async function selectYearStamps(db: Db, projectId: string, years: readonly string[]): Promise<Map<string, { sourceCount: number; updatedMicros: number }>> {
  if (!years.length) return new Map();
  const rows = await db
    .select({ label: memoryReports.label, sourceCount: memoryReports.sourceCount, updatedMicros: micros(sql`${memoryReports.updatedAt}`) })
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'year'), inArray(memoryReports.label, [...years])));
  return new Map(rows.map((r) => [r.label, { sourceCount: r.sourceCount, updatedMicros: Number(r.updatedMicros) }]));
}

/** The weekly reports of one ISO year, oldest first. */
export async function selectWeeksOfYear(db: Db, projectId: string, year: string): Promise<ReportRow[]> {
  return db
    .select()
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'week'), eq(weekYear, year)))
    .orderBy(asc(memoryReports.periodStart));
}

export async function selectYears(db: Db, projectId: string, years: readonly string[]): Promise<ReportRow[]> {
  if (!years.length) return [];
  return db
    .select()
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, 'year'), inArray(memoryReports.label, [...years])))
    .orderBy(asc(memoryReports.periodStart));
}

/** The stored report of one period, if there is one: what stands when a new one fails. */
export async function selectReport(db: Db, projectId: string, kind: MemoryReportKind, periodStart: string): Promise<ReportRow | undefined> {
  const [row] = await db
    .select()
    .from(memoryReports)
    .where(and(eq(memoryReports.projectId, projectId), eq(memoryReports.kind, kind), eq(memoryReports.periodStart, periodStart)));
  return row;
}

/** A report as written: what the view shows, less what the database assigns or works out. */
type ReportWrite = Omit<MemoryReportView, 'id' | 'createdAt' | 'updatedAt' | 'periodEnd' | 'partial'>;

/**
 * Inserts the report of a period or replaces the one there (one row per project, kind and period), with its audit
 * entry last in the same transaction. A weekly report gives `readAt`, the instant its log was read: its timestamps
 * are then that instant rather than the later moment the model answered, so a report read before its week ended is
 * partial (isPartialWeek) and says exactly how far it reaches.
 */
export async function upsertReport(db: Db, report: ReportWrite, readAt?: Date): Promise<ReportRow> {
  const updatedAt = readAt ?? sql`now()`;
  return withTransaction(db, async (tx) => {
    const [before] = await tx
      .select({ tokens: memoryReports.tokens })
      .from(memoryReports)
      .where(and(eq(memoryReports.projectId, report.projectId), eq(memoryReports.kind, report.kind), eq(memoryReports.periodStart, report.periodStart)));
    const [row] = await tx
      .insert(memoryReports)
      .values({ ...report, ...(readAt ? { createdAt: readAt, updatedAt: readAt } : {}) })
      .onConflictDoUpdate({
        target: [memoryReports.projectId, memoryReports.kind, memoryReports.periodStart],
        set: { label: report.label, summary: report.summary, tokens: report.tokens, sourceCount: report.sourceCount, generatedBy: report.generatedBy, updatedAt },
      })
      .returning();
    // The summary itself stays out of the trail: it is in the row, and the trail is kept for ever.
    await appendAudit(tx, {
      projectId: report.projectId,
      entityType: 'memory_report',
      entityId: report.label,
      action: before ? 'report.regenerated' : 'report.generated',
      actor: report.generatedBy,
      oldValue: before ? { label: report.label, tokens: before.tokens } : undefined,
      newValue: { label: report.label, tokens: report.tokens },
    });
    return row!;
  });
}
