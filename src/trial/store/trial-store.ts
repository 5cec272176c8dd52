import type { Db } from '../../core/db/connect.js';
import { appendAudit, listAudit } from './audit.js';
import { definitionChanges, getArms, getDictionary, getEvents, identifierFields, replaceArms, replaceDictionary, replaceEvents } from './dictionary.js';
import { compareRecords, importRecords, type ImportRecordsOptions, type ImportRecordsResult, type RecordComparison } from './import-records.js';
import { ensureProject } from './project.js';
import { countRecords, getRecord, listRecords, listSites, type RecordFilter, type RecordPage } from './records.js';
import type { AuditEntityType, AuditEntry, AuditEntryInput, DictionaryField, ScheduledEvent, StoredRecord, TrialArm, TrialEvent, TrialField, TrialRecord } from './types.js';
import { withTransaction } from '../../core/db/transaction.js';

export interface TrialStore {
  /** Creates the project unless it exists (an existing one keeps its name); true when it was created. */
  ensureProject(project: { id: string; name: string }, actor?: string): Promise<boolean>;
  /** Replaces the data dictionary; true when it changed (then one audit entry is written). */
  replaceDictionary(projectId: string, fields: ReadonlyArray<TrialField>, actor: string, reason?: string): Promise<boolean>;
  replaceEvents(projectId: string, events: ReadonlyArray<TrialEvent>, actor: string, reason?: string): Promise<boolean>;
  /** Replaces the arms (REDCap arm.csv); true when they changed (then one audit entry is written). */
  replaceArms(projectId: string, arms: ReadonlyArray<TrialArm>, actor: string, reason?: string): Promise<boolean>;
  importRecords(projectId: string, records: ReadonlyArray<TrialRecord>, options: ImportRecordsOptions): Promise<ImportRecordsResult>;
  /** What importRecords would create, update and leave unchanged, reading only (an import preview). */
  compareRecords(projectId: string, records: ReadonlyArray<TrialRecord>): Promise<RecordComparison>;
  /** Whether replacing dictionary, events (when given) and arms (when given) would change them, reading only. */
  definitionChanges(projectId: string, incoming: { fields: ReadonlyArray<TrialField>; events?: ReadonlyArray<TrialEvent>; arms?: ReadonlyArray<TrialArm> }): Promise<{ isDictionaryChanged: boolean; isEventsChanged: boolean; isArmsChanged: boolean }>;
  getDictionary(projectId: string): Promise<DictionaryField[]>;
  /** Names of the fields flagged "Identifier?" (kept away from models and masked). */
  identifierFields(projectId: string): Promise<string[]>;
  getEvents(projectId: string): Promise<ScheduledEvent[]>;
  getArms(projectId: string): Promise<TrialArm[]>;
  listRecords(projectId: string, page?: RecordPage): Promise<StoredRecord[]>;
  getRecord(projectId: string, recordId: string): Promise<StoredRecord[]>;
  countRecords(projectId: string, filter?: RecordFilter): Promise<{ rows: number; subjects: number }>;
  listSites(projectId: string): Promise<Array<{ site: string; subjects: number }>>;
  appendAudit(entry: AuditEntryInput): Promise<void>;
  listAudit(projectId: string, filter?: { entityType?: AuditEntityType; entityId?: string }): Promise<AuditEntry[]>;
  /**
   * Runs `work` in one transaction with a store bound to it: everything it writes commits together or not
   * at all. This is how a CSV import replaces dictionary, events and records as one change.
   */
  transaction<T>(work: (store: TrialStore) => Promise<T>): Promise<T>;
}

/**
 * Trial data for quality control: projects, dictionary, visit schedule, records, audit trail. Every write
 * runs in a transaction with its audit entries; inside `transaction()` those become savepoints of the outer one.
 */
export function createTrialStore(db: Db): TrialStore {
  return {
    ensureProject: (project, actor = 'system') => ensureProject(db, project, actor),
    replaceDictionary: (projectId, fields, actor, reason) => replaceDictionary(db, projectId, fields, actor, reason),
    replaceEvents: (projectId, events, actor, reason) => replaceEvents(db, projectId, events, actor, reason),
    replaceArms: (projectId, arms, actor, reason) => replaceArms(db, projectId, arms, actor, reason),
    importRecords: (projectId, records, options) => importRecords(db, projectId, records, options),
    compareRecords: (projectId, records) => compareRecords(db, projectId, records),
    definitionChanges: (projectId, incoming) => definitionChanges(db, projectId, incoming),
    getDictionary: (projectId) => getDictionary(db, projectId),
    identifierFields: (projectId) => identifierFields(db, projectId),
    getEvents: (projectId) => getEvents(db, projectId),
    getArms: (projectId) => getArms(db, projectId),
    listRecords: (projectId, page) => listRecords(db, projectId, page),
    getRecord: (projectId, recordId) => getRecord(db, projectId, recordId),
    countRecords: (projectId, filter) => countRecords(db, projectId, filter),
    listSites: (projectId) => listSites(db, projectId),
    appendAudit: (entry) => appendAudit(db, entry),
    listAudit: (projectId, filter) => listAudit(db, projectId, filter),
    transaction: (work) => withTransaction(db, (tx) => work(createTrialStore(tx))),
  };
}

export type { ImportRecordsOptions, ImportRecordsResult, RecordFilter, RecordPage };
