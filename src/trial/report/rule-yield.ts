import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';

/**
 * What each rule's queries came to. Published analyses of EDC queries find most change nothing; a rule whose queries
 * rarely lead to a data change costs sites and data managers time for little, and is better moved to central review
 * (a listing someone reads) than raised as queries. Counts only: no value, record or subject leaves this function.
 */
export interface RuleYield {
  skillId: string;
  ruleId: string;
  field: string;
  /** Every query the rule raised on the field (a query reopened later counts once). */
  raised: number;
  /** At the site, waiting for an answer: open, or reopened. */
  open: number;
  /** Raised by a run whose review has not yet sent it to the site. */
  held: number;
  /** Answered by the site, waiting for data management. */
  answered: number;
  /** Closed, and the data changed while the query was open (see the definition below). */
  closedWithChange: number;
  /** Closed by a person, and the field's value did not change while the query was open. */
  closedNoChange: number;
  /** Closed by the system as no longer firing without any change to the record: the rule was fixed or removed. */
  closedNoLongerFires: number;
  /** Withdrawn before it reached the site (a rejected review, or no longer firing while held). */
  cancelled: number;
  /** closedWithChange / every closed query; null while none is closed. */
  yield: number | null;
  /** Worth considering for central review (isLowYield). */
  lowYield: boolean;
}

export interface RuleYieldFilter {
  skillId?: string;
  /** Queries raised at or after this time (an ISO date or date-time). */
  since?: string;
}

/**
 * "Led to a data change", precisely. A closed query led to a data change when the record's audit trail (record.create
 * or record.update entries, written by every import in the same transaction as the change) has an entry after the
 * query was raised (created_at) and no later than it was closed (its newest status:closed audit entry, else its
 * updated_at) that either
 * - changes the query's own cell: same event, and the entry's changed data has the query's field (`age`, or
 *   `v2_arm_1.visit_date` read as `visit_date` of event v2_arm_1); or
 * - is any change to the record, when the system closed the query as no longer firing: the rule stopped firing once
 *   the data changed, whichever of the fields it reads changed (a query on the consent date is resolved by correcting
 *   the enrolment date).
 * A query the system closed as no longer firing with no change to the record in between stopped firing because the
 * rule was fixed or removed: closedNoLongerFires, which counts as closed without yield.
 */
export async function computeRuleYield(db: Db, projectId: string, filter: RuleYieldFilter = {}): Promise<RuleYield[]> {
  const since = parseSince(filter.since);
  // Held is read as queries.ts shows it (a live query a review still holds back); a stored 'held' status, should the
  // lifecycle ever store one, counts the same. One statement for every rule: no query per query.
  const rows = await queryRows<YieldRow>(
    db,
    sql`WITH q AS (
          SELECT pa.id, pa.record_id, pa.event_name, pa.rule_id, pa.field, pa.status, pa.held_by_task_run_id, pa.no_longer_fires, pa.created_at, tr.skill_id,
                 CASE WHEN pa.event_name <> '' AND left(pa.field, length(pa.event_name) + 1) = pa.event_name || '.'
                      THEN substr(pa.field, length(pa.event_name) + 2) ELSE pa.field END AS data_key,
                 coalesce((SELECT max(c.at) FROM audit_log c
                           WHERE c.project_id = pa.project_id AND c.entity_type = 'query' AND c.entity_id = pa.id::text AND c.action = 'status:closed'),
                          pa.updated_at) AS closed_at
          FROM pending_actions pa JOIN task_runs tr ON tr.id = pa.task_run_id
          WHERE pa.project_id = ${projectId}
            ${filter.skillId ? sql`AND tr.skill_id = ${filter.skillId}` : sql``}
            ${since ? sql`AND pa.created_at >= ${since.toISOString()}::timestamptz` : sql``}
        ),
        judged AS (
          SELECT q.*, q.status = 'closed' AND EXISTS (
                   SELECT 1 FROM audit_log a
                   WHERE a.project_id = ${projectId} AND a.entity_type = 'record' AND a.entity_id = q.record_id
                     AND a.action IN ('record.create', 'record.update')
                     AND a.at > q.created_at AND a.at <= q.closed_at
                     AND (q.no_longer_fires IS NOT NULL
                          OR (coalesce(a.new_value->>'eventName', '') = q.event_name AND (a.new_value->'data') ? q.data_key))
                 ) AS changed
          FROM q
        )
        SELECT skill_id, rule_id, field,
               count(*) AS raised,
               count(*) FILTER (WHERE status IN ('open', 'reopened') AND held_by_task_run_id IS NULL) AS open,
               count(*) FILTER (WHERE status = 'held' OR (status IN ('open', 'answered', 'reopened') AND held_by_task_run_id IS NOT NULL)) AS held,
               count(*) FILTER (WHERE status = 'answered' AND held_by_task_run_id IS NULL) AS answered,
               count(*) FILTER (WHERE changed) AS closed_with_change,
               count(*) FILTER (WHERE status = 'closed' AND NOT changed AND no_longer_fires IS NULL) AS closed_no_change,
               count(*) FILTER (WHERE status = 'closed' AND NOT changed AND no_longer_fires IS NOT NULL) AS closed_no_longer_fires,
               count(*) FILTER (WHERE status = 'cancelled') AS cancelled
        FROM judged
        GROUP BY skill_id, rule_id, field
        ORDER BY skill_id, rule_id, field`,
  );
  return rows.map(toRuleYield);
}

interface YieldRow {
  skill_id: string;
  rule_id: string;
  field: string;
  raised: string | number;
  open: string | number;
  held: string | number;
  answered: string | number;
  closed_with_change: string | number;
  closed_no_change: string | number;
  closed_no_longer_fires: string | number;
  cancelled: string | number;
}

function toRuleYield(row: YieldRow): RuleYield {
  const closedWithChange = Number(row.closed_with_change);
  const closed = closedWithChange + Number(row.closed_no_change) + Number(row.closed_no_longer_fires);
  const rule = {
    skillId: row.skill_id,
    ruleId: row.rule_id,
    field: row.field,
    raised: Number(row.raised),
    open: Number(row.open),
    held: Number(row.held),
    answered: Number(row.answered),
    closedWithChange,
    closedNoChange: Number(row.closed_no_change),
    closedNoLongerFires: Number(row.closed_no_longer_fires),
    cancelled: Number(row.cancelled),
    yield: closed ? closedWithChange / closed : null,
  };
  return { ...rule, lowYield: isLowYield(rule) };
}

function parseSince(since: string | undefined): Date | undefined {
  if (since === undefined || since === '') return undefined;
  const at = /^\d{4}-\d{2}-\d{2}(T.*)?$/.test(since) ? new Date(since) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime())) {
    throw new ClinAgentError('VALIDATION_FAILED', `since "${since}" is not a date. Give an ISO date such as 2025-06-01, or a date-time such as 2025-06-01T00:00:00Z.`, { field: 'since' });
  }
  return at;
}

/**
 * A rule worth moving to central review: at least this many closed queries, so the rate means something, and fewer
 * than this share of them led to a data change. The console flags it; the report's sheet marks it.
 */
export const LOW_YIELD = { maxYield: 0.2, minClosed: 10 } as const;

export function isLowYield(rule: Pick<RuleYield, 'closedWithChange' | 'closedNoChange' | 'closedNoLongerFires' | 'yield'>): boolean {
  const closed = rule.closedWithChange + rule.closedNoChange + rule.closedNoLongerFires;
  return closed >= LOW_YIELD.minClosed && rule.yield !== null && rule.yield < LOW_YIELD.maxYield;
}
