import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { trialEvents, trialFields, trialRecords } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { baseFieldName } from '../identifiers.js';

type Data = Record<string, unknown>;

export interface RecordContext {
  recordId: string;
  site: string;
  /**
   * What hard rules see. Longitudinal projects: the first event's fields at the top level and every event's
   * fields under its name. A project without events: the one row's fields at the top level, nothing nested.
   */
  data: Data;
  /** What a model may see: each field once and no identifier field (names, phone, address, birth date). */
  modelView: Data;
  /** Record version per event, so a QC step can say which data it checked. */
  versions: Record<string, number>;
  /** Events of the record in schedule order; empty for a project without events. */
  events: string[];
  /**
   * The values of the record's identifier fields, at every event. A rule's error can quote any value it read
   * (`argument 1 "1990/02/01" is not an ISO date`), and the message is stored for every reader, so findings have
   * these cut out of their messages (withoutIdentifierValues).
   */
  identifierValues: unknown[];
}

/**
 * A subject's data as one object for the rules. Baseline fields (age, consent and enrolment dates) are at
 * the top level, as protocols speak of them; visit fields are under the event name
 * (`{"var": "week4_arm_1.visit_date"}`), so one rule can compare a visit date with the enrolment date.
 *
 * Every object is built without a prototype, so an event or field named `__proto__` or `constructor` is plain
 * data: it can neither replace the object's prototype nor hide behind an inherited property.
 */
export async function loadRecordContext(db: Db, projectId: string, recordId: string): Promise<RecordContext> {
  const [context] = (await loadRecordContexts(db, projectId, [recordId])).values();
  if (!context) {
    throw new ClinAgentError('NOT_FOUND', `Record "${recordId}" does not exist in project "${projectId}". Check the record id, or import the data first.`, { projectId, recordId });
  }
  return context;
}

/**
 * Several records of one project as loadRecordContext builds each, in three queries whatever their number (a QC
 * batch reads its records this way). Records that do not exist are absent from the map.
 */
export async function loadRecordContexts(db: Db, projectId: string, recordIds: readonly string[]): Promise<Map<string, RecordContext>> {
  const out = new Map<string, RecordContext>();
  if (!recordIds.length) return out;
  const rows = await db.select().from(trialRecords).where(and(eq(trialRecords.projectId, projectId), recordIds.length === 1 ? eq(trialRecords.recordId, recordIds[0]!) : inArray(trialRecords.recordId, [...recordIds])));
  if (!rows.length) return out;
  const schedule = await db.select({ eventName: trialEvents.eventName, armNum: trialEvents.armNum }).from(trialEvents).where(eq(trialEvents.projectId, projectId)).orderBy(asc(trialEvents.ordinal));
  const order = schedule.map((e) => e.eventName);
  const armOf = new Map(schedule.map((e) => [e.eventName, e.armNum]));
  const identifiers = new Set(
    (await db.select({ name: trialFields.fieldName }).from(trialFields).where(and(eq(trialFields.projectId, projectId), eq(trialFields.identifier, true)))).map((f) => f.name),
  );
  const byRecord = new Map<string, Array<typeof rows[number]>>();
  for (const row of rows) {
    const list = byRecord.get(row.recordId);
    if (list) list.push(row);
    else byRecord.set(row.recordId, [row]);
  }
  const rankOf = new Map(order.map((event, i) => [event, i]));
  for (const [recordId, recordRows] of byRecord) out.set(recordId, buildContext(recordId, recordRows, rankOf, armOf, identifiers));
  return out;
}

/** The distinct record ids of runs (or anything naming a record), per project, as loadRecordContexts takes them. */
export function recordIdsByProject(items: Iterable<{ projectId: string; recordId: string }>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const { projectId, recordId } of items) {
    const ids = out.get(projectId) ?? new Set<string>();
    ids.add(recordId);
    out.set(projectId, ids);
  }
  return new Map([...out].map(([projectId, ids]) => [projectId, [...ids]]));
}

/**
 * A longitudinal record's data also holds `redcap_arms`, the arms (REDCap arm_num) of the events it has, so a rule
 * can apply to the subjects of an arm only: an imported REDCap rule on `[visit_1_arm_1][vld1]` must not fire for a
 * subject of arm 2, who never has that visit (as in REDCap Data Quality). Not in the model's view: it is schedule,
 * not data.
 */
export const ARMS_FIELD = 'redcap_arms';

function buildContext(recordId: string, rows: Array<{ eventName: string; site: string | null; version: number; data: Data }>, rankOf: ReadonlyMap<string, number>, armOf: ReadonlyMap<string, number>, identifiers: ReadonlySet<string>): RecordContext {
  const rank = (event: string) => rankOf.get(event) ?? Number.MAX_SAFE_INTEGER;
  rows.sort((a, b) => rank(a.eventName) - rank(b.eventName) || a.eventName.localeCompare(b.eventName));
  // A subject belongs to one site (its REDCap data access group); an export may carry it on some rows only.
  const site = rows.find((row) => row.site)?.site ?? '';
  const versions = bare<number>();
  const longitudinal = rows.some((row) => row.eventName !== '');
  if (!longitudinal) {
    versions[''] = rows[0]!.version;
    const fields = copy(rows[0]!.data);
    const identifierValues = valuesOfIdentifiers(rows, identifiers);
    return { recordId, site, data: assign(copy(fields), { record_id: recordId, site }), modelView: assign(withoutIdentifiers(fields, identifiers), { record_id: recordId, site }), versions, events: [], identifierValues };
  }
  const data: Data = assign(copy(rows[0]!.data), { record_id: recordId, site });
  const modelEvents = bare<Data>();
  for (const row of rows) {
    data[row.eventName] = copy(row.data);
    modelEvents[row.eventName] = withoutIdentifiers(row.data, identifiers);
    versions[row.eventName] = row.version;
  }
  data[ARMS_FIELD] = [...new Set(rows.flatMap((row) => (armOf.has(row.eventName) ? [armOf.get(row.eventName)!] : [])))].sort((a, b) => a - b);
  return { recordId, site, data, modelView: assign(bare<unknown>(), { record_id: recordId, site, events: modelEvents }), versions, events: rows.map((r) => r.eventName), identifierValues: valuesOfIdentifiers(rows, identifiers) };
}

function valuesOfIdentifiers(rows: ReadonlyArray<{ data: Data }>, identifiers: ReadonlySet<string>): unknown[] {
  if (!identifiers.size) return [];
  const values: unknown[] = [];
  for (const row of rows) {
    for (const key of Object.keys(row.data)) {
      const value = row.data[key];
      if (value !== null && value !== '' && identifiers.has(baseFieldName(key))) values.push(value);
    }
  }
  return values;
}

/**
 * The visit a rule's field was read from: the event its path names (`v2_arm_1.visit_date` -> v2_arm_1), else the
 * record's first event, whose fields the rules see at the top level (`age`); '' for a project without events.
 */
export function eventOf(record: Pick<RecordContext, 'events'>, field: string): string {
  const prefix = field.split('.')[0]!;
  return record.events.includes(prefix) ? prefix : (record.events[0] ?? '');
}

function bare<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function copy(source: Data): Data {
  return assign(bare<unknown>(), source);
}

/** Own enumerable keys only, by plain assignment onto a prototype-less target (so `__proto__` stays a key). */
function assign(target: Data, source: Data): Data {
  for (const key of Object.keys(source)) target[key] = source[key];
  return target;
}

/** A checkbox identifier (`contact`) is exported as one column per choice (`contact___1`): each is withheld too. */
function withoutIdentifiers(source: Data, identifiers: ReadonlySet<string>): Data {
  const out = bare<unknown>();
  for (const key of Object.keys(source)) if (!identifiers.has(baseFieldName(key))) out[key] = source[key];
  return out;
}
