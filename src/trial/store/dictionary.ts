import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { trialEvents, trialFields } from '../../core/db/schema/trial.js';
import { appendAudit } from './audit.js';
import { lockProject } from './project.js';
import { stableJson } from './stable-json.js';
import type { TrialEvent, TrialField } from './types.js';

/**
 * The data dictionary and the visit schedule are replaced as a whole, as REDCap exports them. The audit entry
 * lists only the definitions that were removed, added or changed, so a reviewer sees what moved, not 300
 * unchanged fields. Returns whether anything changed; an identical dictionary writes nothing.
 */
export async function replaceDictionary(db: Db, projectId: string, fields: ReadonlyArray<TrialField>, actor: string, reason = ''): Promise<boolean> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await lockProject(tx, projectId);
    const change = diffDefinitions(await getDictionary(tx, projectId), fields, (field) => field.fieldName);
    if (!change) return false;
    await tx.delete(trialFields).where(eq(trialFields.projectId, projectId));
    if (fields.length > 0) await tx.insert(trialFields).values(fields.map((field, ordinal) => ({ ...field, projectId, ordinal })));
    await appendAudit(tx, { projectId, entityType: 'project', entityId: projectId, action: 'dictionary.replace', actor, ...change, reason });
    return true;
  });
}

export async function getDictionary(db: Db, projectId: string): Promise<TrialField[]> {
  const rows = await db.select().from(trialFields).where(eq(trialFields.projectId, projectId)).orderBy(asc(trialFields.ordinal));
  return rows.map(({ fieldName, formName, fieldType, label, choices, validationMin, validationMax, required }) => ({
    fieldName,
    formName,
    fieldType,
    label,
    choices,
    validationMin,
    validationMax,
    required,
  }));
}

export async function replaceEvents(db: Db, projectId: string, events: ReadonlyArray<TrialEvent>, actor: string, reason = ''): Promise<boolean> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await lockProject(tx, projectId);
    const change = diffDefinitions(await getEvents(tx, projectId), events, (event) => event.eventName);
    if (!change) return false;
    await tx.delete(trialEvents).where(eq(trialEvents.projectId, projectId));
    if (events.length > 0) await tx.insert(trialEvents).values(events.map((event, ordinal) => ({ ...event, projectId, ordinal })));
    await appendAudit(tx, { projectId, entityType: 'project', entityId: projectId, action: 'events.replace', actor, ...change, reason });
    return true;
  });
}

export async function getEvents(db: Db, projectId: string): Promise<TrialEvent[]> {
  const rows = await db.select().from(trialEvents).where(eq(trialEvents.projectId, projectId)).orderBy(asc(trialEvents.ordinal));
  return rows.map(({ eventName, label, dayOffset, windowBefore, windowAfter }) => ({ eventName, label, dayOffset, windowBefore, windowAfter }));
}

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
