import { eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { pendingActions } from '../../core/db/schema/trial.js';
import { shownStatus } from '../queries.js';
import { naturalRecordOrder } from '../store/record-order.js';
import { computeRuleYield, type RuleYield } from './rule-yield.js';

export interface ReportRow {
  recordId: string;
  eventName: string;
  site: string;
  field: string;
  ruleId: string;
  severity: string;
  status: string;
  message: string;
  /** A number stays a number, so spreadsheets can compute with it; anything else is text (JSON for objects). */
  value: string | number;
  createdAt: string;
}

export interface ViolationsReport {
  projectId: string;
  generatedAt: string;
  total: number;
  byField: Array<{ key: string; count: number }>;
  byRule: Array<{ key: string; count: number }>;
  bySite: Array<{ key: string; count: number }>;
  bySeverity: Array<{ key: string; count: number }>;
  byStatus: Array<{ key: string; count: number }>;
  /** What each rule's queries came to (rule-yield.ts): counts only, so nothing in it needs masking. */
  ruleYield: RuleYield[];
  rows: ReportRow[];
}

/** Violations (data queries) of a project, with counts by field, rule, site, severity and status. */
export async function buildViolationsReport(db: Db, projectId: string): Promise<ViolationsReport> {
  const [queries, ruleYield] = await Promise.all([
    db.select().from(pendingActions).where(eq(pendingActions.projectId, projectId)).orderBy(...naturalRecordOrder(pendingActions.recordId), pendingActions.field),
    computeRuleYield(db, projectId),
  ]);
  const rows: ReportRow[] = queries.map((q) => ({
    recordId: q.recordId,
    eventName: q.eventName,
    site: q.site,
    field: q.field,
    ruleId: q.ruleId,
    severity: q.severity,
    // `held` until the review sends the query: a held query is not one the site has been asked.
    status: shownStatus(q),
    message: q.message,
    value: q.value === null || q.value === undefined ? '' : typeof q.value === 'string' || typeof q.value === 'number' ? q.value : JSON.stringify(q.value),
    createdAt: q.createdAt.toISOString(),
  }));
  const countBy = (key: (r: ReportRow) => string) => {
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(key(row), (counts.get(key(row)) ?? 0) + 1);
    return [...counts.entries()].map(([k, count]) => ({ key: k, count })).sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
  };
  return {
    projectId,
    generatedAt: new Date().toISOString(),
    total: rows.length,
    byField: countBy((r) => r.field),
    byRule: countBy((r) => r.ruleId),
    // '' for a trial without data access groups: a client names it in its own language (the console's "(no site)").
    bySite: countBy((r) => r.site),
    bySeverity: countBy((r) => r.severity),
    byStatus: countBy((r) => r.status),
    ruleYield,
    rows,
  };
}
