import { and, asc, desc, eq, inArray, isNotNull, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { ACTIVE_QUERY_STATUSES, pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import type { AuditEntryInput } from '../../core/audit/audit-log.js';

/**
 * From findings to data queries, across runs. A finding is (project, record, event, rule, field); it has at most
 * one live query (open, answered or reopened), whichever run, retry, resume or cron job sees it fire, and the
 * database's partial unique index guarantees that even when 50 runs of the same record race.
 *
 * - fires, live query exists: the query is kept and notes the run that saw it again (and the value it read);
 * - fires, last query closed or cancelled: that query is reopened, never duplicated;
 * - fires, never seen: a query is opened, held back by the run until its review (if any) lets it go;
 * - no longer fires (the data changed, the rule was fixed or removed): the live query is closed by the system,
 *   marked "no longer fires as of run X"; one still held back by a review (never sent) is withdrawn, and a review
 *   left about nothing ends (see closeNoLongerFiring).
 *
 * Audit entries are returned, not written: the caller writes them last in its transaction, after every row lock
 * it takes, so the audit chain's lock is never held while waiting for a query row.
 */

export interface Finding {
  ruleId: string;
  /** The visit the finding belongs to ('' for a project without events). */
  eventName: string;
  field: string;
  message: string;
  severity: 'error' | 'warning' | 'info';
  /** The value the rule read. */
  value: unknown;
  /** Every value the rule read, hashed (read-fingerprint.ts); absent for a finding a person raised. */
  readFingerprint?: string | null;
}

interface FindingScope {
  projectId: string;
  recordId: string;
  site: string;
  taskRunId: string;
  qcRunId: string | null;
  nodeId: string;
  actor: string;
}

/** Enough attempts for a few concurrent runs racing on one finding; each attempt sees the winner's commit. */
const MAX_ATTEMPTS = 4;

export async function raiseFindings(tx: Db, scope: FindingScope, findings: readonly Finding[]): Promise<AuditEntryInput[]> {
  const audit: AuditEntryInput[] = [];
  // A fixed order, so two runs of one record lock the same query rows in the same order and cannot deadlock.
  const sorted = [...findings].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  for (const finding of sorted) audit.push(...(await raiseOne(tx, scope, finding)));
  return audit;
}

async function raiseOne(tx: Db, scope: FindingScope, finding: Finding): Promise<AuditEntryInput[]> {
  const key = and(
    eq(pendingActions.projectId, scope.projectId),
    eq(pendingActions.recordId, scope.recordId),
    eq(pendingActions.eventName, finding.eventName),
    eq(pendingActions.ruleId, finding.ruleId),
    eq(pendingActions.field, finding.field),
  );
  const now = new Date();
  const entry = (queryId: string, action: string, oldValue: unknown, newValue: unknown, reason = ''): AuditEntryInput => ({
    projectId: scope.projectId, entityType: 'query', entityId: queryId, action, actor: scope.actor, oldValue, newValue, reason,
  });
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const [live] = await tx.select().from(pendingActions).where(and(key, inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]))).for('update');
    if (live) {
      const changed = JSON.stringify(live.value ?? null) !== JSON.stringify(finding.value ?? null) || live.noLongerFires !== null;
      await tx
        .update(pendingActions)
        .set({ lastTaskRunId: scope.taskRunId, value: finding.value ?? null, readFingerprint: finding.readFingerprint ?? null, message: finding.message, noLongerFires: null, updatedAt: now })
        .where(eq(pendingActions.id, live.id));
      return changed
        ? [entry(live.id, 'fired_again', { value: live.value, noLongerFires: live.noLongerFires }, { value: finding.value ?? null, taskRunId: scope.taskRunId })]
        : [];
    }
    const [last] = await tx
      .select()
      .from(pendingActions)
      .where(and(key, inArray(pendingActions.status, ['closed', 'cancelled'])))
      .orderBy(desc(pendingActions.updatedAt))
      .limit(1);
    // Decided by a person on these very values (closed as verified, withdrawn by a rejected review): not raised again.
    if (last && isDecidedOnSameValues(last, finding)) return [];
    if (last) {
      // The status in the WHERE lets one of two racing runs reopen it; the other finds it live next attempt.
      const [reopened] = await tx
        .update(pendingActions)
        .set({ status: 'reopened', lastTaskRunId: scope.taskRunId, heldByTaskRunId: scope.taskRunId, value: finding.value ?? null, readFingerprint: finding.readFingerprint ?? null, message: finding.message, severity: finding.severity, noLongerFires: null, updatedAt: now })
        .where(and(eq(pendingActions.id, last.id), inArray(pendingActions.status, ['closed', 'cancelled'])))
        .returning({ id: pendingActions.id });
      if (reopened) {
        return [entry(last.id, 'status:reopened', { status: last.status }, { status: 'reopened', value: finding.value ?? null, taskRunId: scope.taskRunId }, `the finding fires again in task run ${scope.taskRunId}`)];
      }
      continue;
    }
    const [opened] = await tx
      .insert(pendingActions)
      .values({
        projectId: scope.projectId,
        taskRunId: scope.taskRunId,
        lastTaskRunId: scope.taskRunId,
        heldByTaskRunId: scope.taskRunId,
        recordId: scope.recordId,
        eventName: finding.eventName,
        site: scope.site,
        nodeId: scope.nodeId,
        ruleId: finding.ruleId,
        field: finding.field,
        message: finding.message,
        severity: finding.severity,
        value: finding.value ?? null,
        readFingerprint: finding.readFingerprint ?? null,
      })
      .onConflictDoNothing()
      .returning({ id: pendingActions.id });
    if (opened) {
      return [entry(opened.id, 'opened', null, { status: 'open', recordId: scope.recordId, eventName: finding.eventName, field: finding.field, ruleId: finding.ruleId, message: finding.message, value: finding.value ?? null })];
    }
    // Another run opened it between our look and our insert; the next attempt finds it live.
  }
  throw new Error(`could not settle the query for ${keyOf(finding)} after ${MAX_ATTEMPTS} attempts`);
}

/**
 * A closed or withdrawn query that a person decided (the system's "no longer fires" closes are not decisions: the
 * data changed under them) on the values the finding reads now. Queries stored before fingerprints compare the
 * value of their field. A finding without a fingerprint is one a person raises (a reviewer's reject of a soft rule
 * the model could not judge): a decision taken now, never held back by an earlier one.
 */
export function isDecidedOnSameValues(last: { noLongerFires: unknown; readFingerprint: string | null; value: unknown }, finding: Pick<Finding, 'value' | 'readFingerprint'>): boolean {
  if (last.noLongerFires !== null || !finding.readFingerprint) return false;
  if (last.readFingerprint) return last.readFingerprint === finding.readFingerprint;
  return JSON.stringify(last.value ?? null) === JSON.stringify(finding.value ?? null);
}

/** What a node checked: the rules it ran, fired or not, and every rule its skill has now. */
export interface CheckedRules {
  ruleIds: string[];
  /** A query of a rule no longer in the skill can never fire again, whichever node a run reaches. */
  skillRuleIds: string[];
}

/**
 * Closes the live queries of this run's skill on this record that no longer fire: their rule ran in this node
 * and did not raise their key (the data changed, the rule was fixed, or the key itself changed, as for queries
 * stored with a wrong event), or their rule is gone from the skill. A query the site has is closed; one a review
 * still holds back is withdrawn (cancelled). Returns the suspended runs whose review is now about nothing: every
 * query they held is withdrawn, or the soft rule they ask about passed. Their rows are locked here, before the
 * query rows, in the order a review decision takes them, so a decision racing this close cannot deadlock it.
 */
export async function closeNoLongerFiring(
  tx: Db,
  scope: FindingScope & { skillId: string },
  checked: CheckedRules,
  fired: readonly Finding[],
): Promise<{ audit: AuditEntryInput[]; reviewsToWithdraw: string[] }> {
  const firedKeys = fired.map((f) => sql`(${f.eventName}, ${f.ruleId}, ${f.field})`);
  const firedRules = new Set(fired.map((f) => f.ruleId));
  const passed = checked.ruleIds.filter((id) => !firedRules.has(id));
  const removed = (column: typeof pendingActions.ruleId | SQL) => (checked.skillRuleIds.length ? sql`${column} NOT IN (${sql.join(checked.skillRuleIds.map((id) => sql`${id}`), sql`, `)})` : sql`true`);
  const stale = and(
    eq(pendingActions.projectId, scope.projectId),
    eq(pendingActions.recordId, scope.recordId),
    inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]),
    // Of this skill: the run that last saw it fire ran this skill (another skill with the same rule keeps it).
    sql`exists (select 1 from ${taskRuns} where ${taskRuns.id} = coalesce(${pendingActions.lastTaskRunId}, ${pendingActions.taskRunId}) and ${taskRuns.skillId} = ${scope.skillId})`,
    or(
      checked.ruleIds.length
        ? and(inArray(pendingActions.ruleId, checked.ruleIds), firedKeys.length ? sql`(${pendingActions.eventName}, ${pendingActions.ruleId}, ${pendingActions.field}) NOT IN (${sql.join(firedKeys, sql`, `)})` : undefined)
        : undefined,
      removed(pendingActions.ruleId),
    ),
  );
  const found = await tx.select({ id: pendingActions.id, heldBy: pendingActions.heldByTaskRunId }).from(pendingActions).where(stale);
  const holders = [...new Set(found.map((q) => q.heldBy).filter((id): id is string => id !== null && id !== scope.taskRunId))];
  const softRule = sql`${taskRuns.reviewRequest}->'finding'->>'ruleId'`;
  const suspended = await tx
    .select({ id: taskRuns.id })
    .from(taskRuns)
    .where(
      and(
        eq(taskRuns.status, 'SUSPENDED'),
        or(
          holders.length ? inArray(taskRuns.id, holders) : undefined,
          and(
            eq(taskRuns.projectId, scope.projectId),
            eq(taskRuns.recordId, scope.recordId),
            eq(taskRuns.skillId, scope.skillId),
            sql`${taskRuns.reviewRequest}->>'kind' = 'soft_rule_unresolved'`,
            or(passed.length ? sql`${softRule} IN (${sql.join(passed.map((id) => sql`${id}`), sql`, `)})` : undefined, removed(softRule)),
          ),
        ),
      ),
    )
    .orderBy(asc(taskRuns.id))
    .for('update');
  const audit = found.length ? await closeLocked(tx, scope, stale, found.map((q) => q.id)) : [];
  if (!suspended.length) return { audit, reviewsToWithdraw: [] };
  // A review still holding a live query is still about something (a cancelled run would strand it as held).
  const holding = await tx
    .selectDistinct({ id: pendingActions.heldByTaskRunId })
    .from(pendingActions)
    .where(and(inArray(pendingActions.heldByTaskRunId, suspended.map((r) => r.id)), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES])));
  const stillHolding = new Set(holding.map((r) => r.id));
  return { audit, reviewsToWithdraw: suspended.filter((r) => !stillHolding.has(r.id)).map((r) => r.id) };
}

async function closeLocked(tx: Db, scope: FindingScope, stale: SQL | undefined, ids: string[]): Promise<AuditEntryInput[]> {
  const locked = await tx
    .select({ id: pendingActions.id, status: pendingActions.status, heldBy: pendingActions.heldByTaskRunId })
    .from(pendingActions)
    .where(and(stale, inArray(pendingActions.id, ids)))
    .orderBy(asc(pendingActions.eventName), asc(pendingActions.ruleId), asc(pendingActions.field))
    .for('update');
  const note = { taskRunId: scope.taskRunId, qcRunId: scope.qcRunId, at: new Date().toISOString() };
  const asOf = `no longer fires as of ${scope.qcRunId ? `QC run ${scope.qcRunId}, ` : ''}task run ${scope.taskRunId}`;
  const audit: AuditEntryInput[] = [];
  for (const query of locked) {
    // Held back by a review: never sent, so it is withdrawn rather than closed at a site that never saw it.
    const status = query.heldBy ? 'cancelled' : 'closed';
    await tx.update(pendingActions).set({ status, heldByTaskRunId: null, noLongerFires: note, updatedAt: new Date() }).where(eq(pendingActions.id, query.id));
    audit.push({
      projectId: scope.projectId, entityType: 'query', entityId: query.id, action: `status:${status}`, actor: 'system',
      oldValue: { status: query.status, heldByTaskRunId: query.heldBy }, newValue: { status, noLongerFires: note },
      reason: query.heldBy ? `${asOf}; withdrawn before it reached the site` : asOf,
    });
  }
  return audit;
}

/**
 * What a review decision does to the queries a run holds back: approve sends them to the site, reject closes or
 * cancels them as the skill's human_review node says. A run that ends without review lets its queries go.
 */
export async function settleHeldQueries(
  tx: Db,
  input: { projectId: string; taskRunId: string; outcome: 'release' | 'close' | 'cancel'; actor: string; reason: string; /** Only these (a decision per finding); absent: every query the run holds. */ queryIds?: readonly string[] },
): Promise<AuditEntryInput[]> {
  const now = new Date();
  const held = and(eq(pendingActions.heldByTaskRunId, input.taskRunId), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]), input.queryIds ? inArray(pendingActions.id, [...input.queryIds]) : undefined);
  if (input.outcome === 'release') {
    // A held query marked as no longer firing never reaches the site: it is withdrawn, so nobody is asked about a
    // value that is no longer in the record (closeNoLongerFiring now withdraws them at once; rows marked before
    // it are still held with the mark).
    const withdrawn = await tx
      .update(pendingActions)
      .set({ status: 'cancelled', heldByTaskRunId: null, updatedAt: now })
      .where(and(held, isNotNull(pendingActions.noLongerFires)))
      .returning({ id: pendingActions.id });
    const released = await tx.update(pendingActions).set({ heldByTaskRunId: null, updatedAt: now }).where(held).returning({ id: pendingActions.id });
    return [
      ...withdrawn.map(({ id }) => ({
        projectId: input.projectId, entityType: 'query' as const, entityId: id, action: 'status:cancelled', actor: input.actor, newValue: { status: 'cancelled' },
        reason: `${input.reason}; withdrawn before it reached the site: the finding no longer fires on the current data`,
      })),
      ...released.map(({ id }) => ({ projectId: input.projectId, entityType: 'query' as const, entityId: id, action: 'released', actor: input.actor, reason: input.reason })),
    ];
  }
  const status = input.outcome === 'close' ? 'closed' : 'cancelled';
  const settled = await tx.update(pendingActions).set({ status, heldByTaskRunId: null, updatedAt: now }).where(held).returning({ id: pendingActions.id });
  return settled.map(({ id }) => ({ projectId: input.projectId, entityType: 'query' as const, entityId: id, action: `status:${status}`, actor: input.actor, newValue: { status }, reason: input.reason }));
}

function keyOf(f: Pick<Finding, 'eventName' | 'ruleId' | 'field'>): string {
  return `${f.eventName}\u0000${f.ruleId}\u0000${f.field}`;
}
