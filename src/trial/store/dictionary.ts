import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { trialArms, trialEvents, trialFields } from '../../core/db/schema/trial.js';
import { appendAudit } from './audit.js';
import { lockProject } from './project.js';
import { stableJson } from './stable-json.js';
import type { DictionaryField, ScheduledEvent, TrialArm, TrialEvent, TrialField } from './types.js';
import { withTransaction } from '../../core/db/transaction.js';

// 11 columns a field: 1000 rows stay far below PostgreSQL's 65,535 bind parameters. A 10 000-field
// dictionary in one statement needed 110 000, and the import answered 500 ("bind message has 44464
// parameter formats": the 16-bit count wrapped); even larger ones overflow the ORM's stack first.
const DEFINITIONS_PER_INSERT = 1000;

/** Inserts rows in statements of DEFINITIONS_PER_INSERT, inside the caller's transaction. */
async function insertInBatches<T>(rows: ReadonlyArray<T>, insert: (batch: T[]) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < rows.length; start += DEFINITIONS_PER_INSERT) await insert(rows.slice(start, start + DEFINITIONS_PER_INSERT));
}

/**
 * The data dictionary and the visit schedule are replaced as a whole, as REDCap exports them. The audit entry
 * lists only the definitions that were removed, added or changed, so a reviewer sees what moved, not 300
 * unchanged fields. Returns whether anything changed; an identical dictionary writes nothing.
 */
export async function replaceDictionary(db: Db, projectId: string, incoming: ReadonlyArray<TrialField>, actor: string, reason = ''): Promise<boolean> {
  const fields = asStoredFields(incoming);
  return withTransaction(db, async (tx) => {
    await lockProject(tx, projectId);
    const change = diffFields(await getDictionary(tx, projectId), fields);
    if (!change) return false;
    await tx.delete(trialFields).where(eq(trialFields.projectId, projectId));
    await insertInBatches(fields.map((field, ordinal) => ({ ...field, projectId, ordinal })), (batch) => tx.insert(trialFields).values(batch));
    await appendAudit(tx, { projectId, entityType: 'project', entityId: projectId, action: 'dictionary.replace', actor, ...change, reason });
    return true;
  });
}

export async function getDictionary(db: Db, projectId: string): Promise<DictionaryField[]> {
  const rows = await db.select().from(trialFields).where(eq(trialFields.projectId, projectId)).orderBy(asc(trialFields.ordinal));
  return rows.map(({ fieldName, formName, fieldType, label, choices, validationMin, validationMax, required, identifier }) => ({
    fieldName,
    formName,
    fieldType,
    label,
    choices,
    validationMin,
    validationMax,
    required,
    identifier,
  }));
}

/** Names of the fields flagged "Identifier?" in the dictionary, in dictionary order. */
export async function identifierFields(db: Db, projectId: string): Promise<string[]> {
  const rows = await db
    .select({ fieldName: trialFields.fieldName })
    .from(trialFields)
    .where(and(eq(trialFields.projectId, projectId), eq(trialFields.identifier, true)))
    .orderBy(asc(trialFields.ordinal));
  return rows.map((row) => row.fieldName);
}

export async function replaceEvents(db: Db, projectId: string, incoming: ReadonlyArray<TrialEvent>, actor: string, reason = ''): Promise<boolean> {
  const events = asStoredEvents(incoming);
  return withTransaction(db, async (tx) => {
    await lockProject(tx, projectId);
    const change = diffEvents(await getEvents(tx, projectId), events);
    if (!change) return false;
    await tx.delete(trialEvents).where(eq(trialEvents.projectId, projectId));
    await insertInBatches(events.map((event, ordinal) => ({ ...event, projectId, ordinal })), (batch) => tx.insert(trialEvents).values(batch));
    await appendAudit(tx, { projectId, entityType: 'project', entityId: projectId, action: 'events.replace', actor, ...change, reason });
    return true;
  });
}

export async function getEvents(db: Db, projectId: string): Promise<ScheduledEvent[]> {
  const rows = await db.select().from(trialEvents).where(eq(trialEvents.projectId, projectId)).orderBy(asc(trialEvents.ordinal));
  return rows.map(({ eventName, label, dayOffset, windowBefore, windowAfter, armNum }) => ({ eventName, label, dayOffset, windowBefore, windowAfter, armNum }));
}

/** Replaces the project's arms as a whole (REDCap's arm.csv); audited like the schedule. */
export async function replaceArms(db: Db, projectId: string, arms: ReadonlyArray<TrialArm>, actor: string, reason = ''): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    await lockProject(tx, projectId);
    const change = diffArms(await getArms(tx, projectId), arms);
    if (!change) return false;
    await tx.delete(trialArms).where(eq(trialArms.projectId, projectId));
    await insertInBatches(arms.map(({ armNum, name }) => ({ projectId, armNum, name })), (batch) => tx.insert(trialArms).values(batch));
    await appendAudit(tx, { projectId, entityType: 'project', entityId: projectId, action: 'arms.replace', actor, ...change, reason });
    return true;
  });
}

export async function getArms(db: Db, projectId: string): Promise<TrialArm[]> {
  const rows = await db.select().from(trialArms).where(eq(trialArms.projectId, projectId)).orderBy(asc(trialArms.armNum));
  return rows.map(({ armNum, name }) => ({ armNum, name }));
}

/**
 * Which definitions an import of these would replace, compared exactly as the replace functions compare them,
 * reading only: an import preview answers it before anything is written.
 */
export async function definitionChanges(db: Db, projectId: string, incoming: { fields: ReadonlyArray<TrialField>; events?: ReadonlyArray<TrialEvent>; arms?: ReadonlyArray<TrialArm> }): Promise<{ isDictionaryChanged: boolean; isEventsChanged: boolean; isArmsChanged: boolean }> {
  const isDictionaryChanged = diffFields(await getDictionary(db, projectId), asStoredFields(incoming.fields)) !== null;
  const isEventsChanged = incoming.events !== undefined && diffEvents(await getEvents(db, projectId), asStoredEvents(incoming.events)) !== null;
  const isArmsChanged = incoming.arms !== undefined && diffArms(await getArms(db, projectId), incoming.arms) !== null;
  return { isDictionaryChanged, isEventsChanged, isArmsChanged };
}

// Compared and stored with the identifier flag spelled out, so a definition without it equals the stored `false`.
const asStoredFields = (incoming: ReadonlyArray<TrialField>): DictionaryField[] => incoming.map((field) => ({ ...field, identifier: field.identifier ?? false }));
const asStoredEvents = (incoming: ReadonlyArray<TrialEvent>): ScheduledEvent[] => incoming.map((event) => ({ ...event, armNum: event.armNum ?? 1 }));
const diffFields = (stored: DictionaryField[], fields: DictionaryField[]) => diffDefinitions(stored, fields, (field) => field.fieldName);
const diffEvents = (stored: ScheduledEvent[], events: ScheduledEvent[]) => diffDefinitions(stored, events, (event) => event.eventName);
const diffArms = (stored: TrialArm[], arms: ReadonlyArray<TrialArm>) => diffDefinitions(stored, arms.map(({ armNum, name }) => ({ armNum, name })), (arm) => String(arm.armNum));

/**
 * Old and new versions of each definition that differs, position included (the dictionary order is the
 * order of a form). Null when both lists are the same.
 */
function diffDefinitions<T extends object>(stored: ReadonlyArray<T>, incoming: ReadonlyArray<T>, nameOf: (item: T) => string): { oldValue: T[]; newValue: T[] } | null {
  const key = (item: T, position: number) => stableJson({ position, item });
  const storedKeys = new Map(stored.map((item, i) => [nameOf(item), key(item, i)]));
  const incomingKeys = new Map(incoming.map((item, i) => [nameOf(item), key(item, i)]));
  const oldValue = stored.filter((item, i) => incomingKeys.get(nameOf(item)) !== key(item, i));
  const newValue = incoming.filter((item, i) => storedKeys.get(nameOf(item)) !== key(item, i));
  return oldValue.length === 0 && newValue.length === 0 ? null : { oldValue, newValue };
}
