import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { trialEvents, trialRecords } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';

export interface RecordContext {
  recordId: string;
  site: string;
  /** What rules see: the first event's fields at the top level, and every event's fields under its name. */
  data: Record<string, unknown>;
  /** Record version per event, so a QC step can say which data it checked. */
  versions: Record<string, number>;
}

/**
 * A subject's data as one object for the rules. Baseline fields (age, consent and enrolment dates) are at
 * the top level, as protocols speak of them; visit fields are under the event name
 * (`{"var": "week4_arm_1.visit_date"}`), so one rule can compare a visit date with the enrolment date.
 */
export async function loadRecordContext(db: Db, projectId: string, recordId: string): Promise<RecordContext> {
  const rows = await db.select().from(trialRecords).where(and(eq(trialRecords.projectId, projectId), eq(trialRecords.recordId, recordId)));
  if (!rows.length) {
    throw new ClinAgentError('NOT_FOUND', `Record "${recordId}" does not exist in project "${projectId}". Check the record id, or import the data first.`, { projectId, recordId });
  }
  const order = (await db.select({ eventName: trialEvents.eventName }).from(trialEvents).where(eq(trialEvents.projectId, projectId)).orderBy(asc(trialEvents.ordinal))).map((e) => e.eventName);
  const rank = (event: string) => {
    const i = order.indexOf(event);
    return i === -1 ? Number.MAX_SAFE_INTEGER : i;
  };
  rows.sort((a, b) => rank(a.eventName) - rank(b.eventName) || a.eventName.localeCompare(b.eventName));
  const data: Record<string, unknown> = { ...rows[0]!.data, record_id: recordId, site: rows[0]!.site };
  const versions: Record<string, number> = {};
  for (const row of rows) {
    data[row.eventName] = row.data;
    versions[row.eventName] = row.version;
  }
  return { recordId, site: rows[0]!.site, data, versions };
}
