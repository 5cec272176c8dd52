import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../core/db/connect.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { appendAudit } from './audit.js';
import { createTrialStore, type TrialStore } from './trial-store.js';
import type { TrialEvent, TrialField, TrialRecord } from './types.js';
import { withTransaction } from '../../core/db/transaction.js';

const FIELDS: TrialField[] = [
  { fieldName: 'record_id', formName: 'enrolment', fieldType: 'text', label: 'Subject', choices: [], validationMin: null, validationMax: null, required: false, identifier: false },
  { fieldName: 'age', formName: 'enrolment', fieldType: 'integer', label: '年龄 Age', choices: [], validationMin: '0', validationMax: '120', required: true, identifier: false },
  { fieldName: 'sex', formName: 'enrolment', fieldType: 'radio', label: 'Sex', choices: [{ code: '1', label: 'Male' }, { code: '2', label: 'Female' }], validationMin: null, validationMax: null, required: true, identifier: false },
];
const EVENTS: TrialEvent[] = [
  { eventName: 'v1', label: 'V1', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
  { eventName: 'v2', label: 'V2', dayOffset: 28, windowBefore: 3, windowAfter: 3, armNum: 1 },
];
const row = (recordId: string, eventName: string, data: TrialRecord['data'], site = 'SITE-01'): TrialRecord => ({ recordId, eventName, site, data });

describe.each(testEngines())('createTrialStore on %s', (engine) => {
  let close: () => Promise<void>;
  let db: Db;
  let store: TrialStore;
  let projectSeq = 0;
  /** A fresh project per test, so tests do not see each other's records or audit entries. */
  const newProject = async () => {
    const id = `trial-${++projectSeq}`;
    await store.ensureProject({ id, name: `Trial ${projectSeq}` }, 'dm.alice');
    return id;
  };

  beforeAll(async () => {
    const database = await openTestDatabase({ engine });
    db = database.db;
    close = () => database.close();
    store = createTrialStore(db);
  });

  afterAll(async () => {
    await close?.();
  });

  it('creates a project once and audits its creation', async () => {
    expect(await store.ensureProject({ id: 'p-once', name: 'Once' }, 'dm.alice')).toBe(true);
    expect(await store.ensureProject({ id: 'p-once', name: 'Renamed' }, 'dm.bob')).toBe(false);
    const audit = await store.listAudit('p-once');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ entityType: 'project', entityId: 'p-once', action: 'project.create', actor: 'dm.alice', newValue: { name: 'Once' } });
  });

  it('replaces the dictionary and events, auditing only what changed', async () => {
    const projectId = await newProject();
    expect(await store.replaceDictionary(projectId, FIELDS, 'dm.alice', 'initial')).toBe(true);
    expect(await store.replaceEvents(projectId, EVENTS, 'dm.alice')).toBe(true);
    expect(await store.getDictionary(projectId)).toEqual(FIELDS);
    expect(await store.getEvents(projectId)).toEqual(EVENTS);

    // The same definitions again: nothing written.
    expect(await store.replaceDictionary(projectId, FIELDS, 'dm.alice')).toBe(false);
    expect(await store.replaceEvents(projectId, EVENTS, 'dm.alice')).toBe(false);

    const widerAge = { ...FIELDS[1]!, validationMax: '130' };
    expect(await store.replaceDictionary(projectId, [FIELDS[0]!, widerAge, FIELDS[2]!], 'dm.bob', 'allow centenarians')).toBe(true);
    const entries = await store.listAudit(projectId, { entityType: 'project' });
    expect(entries.map((entry) => entry.action)).toEqual(['project.create', 'dictionary.replace', 'events.replace', 'dictionary.replace']);
    expect(entries[3]).toMatchObject({ actor: 'dm.bob', reason: 'allow centenarians', oldValue: [FIELDS[1]], newValue: [widerAge] });
  });

  it('keeps identifier flags, arms and each event\'s arm, and lists the identifier fields', async () => {
    const projectId = await newProject();
    const name = { fieldName: 'subject_name', formName: 'enrolment', fieldType: 'text' as const, label: '姓名 Name', choices: [], validationMin: null, validationMax: null, required: false, identifier: true };
    const { identifier: _omitted, ...ageWithoutFlag } = FIELDS[1]!;
    await store.replaceDictionary(projectId, [FIELDS[0]!, name, ageWithoutFlag], 'dm.alice');
    // A definition without the flag is stored as not an identifier, and equals it: nothing is written again.
    expect((await store.getDictionary(projectId)).map((field) => [field.fieldName, field.identifier])).toEqual([['record_id', false], ['subject_name', true], ['age', false]]);
    expect(await store.replaceDictionary(projectId, [FIELDS[0]!, name, FIELDS[1]!], 'dm.alice')).toBe(false);
    expect(await store.identifierFields(projectId)).toEqual(['subject_name']);

    const arms = [{ armNum: 1, name: 'Drug' }, { armNum: 2, name: 'Placebo' }];
    expect(await store.replaceArms(projectId, arms, 'dm.alice', 'arm.csv')).toBe(true);
    expect(await store.replaceArms(projectId, arms, 'dm.alice')).toBe(false);
    await store.replaceEvents(projectId, [{ eventName: 'v1_arm_1', label: 'V1', dayOffset: 0, windowBefore: 0, windowAfter: 0 }, { eventName: 'v1_arm_2', label: 'V1', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 2 }], 'dm.alice');
    expect(await store.getArms(projectId)).toEqual(arms);
    expect((await store.getEvents(projectId)).map((event) => [event.eventName, event.armNum])).toEqual([['v1_arm_1', 1], ['v1_arm_2', 2]]);
    const armsEntry = (await store.listAudit(projectId)).find((entry) => entry.action === 'arms.replace');
    expect(armsEntry).toMatchObject({ entityType: 'project', actor: 'dm.alice', reason: 'arm.csv', oldValue: [], newValue: arms });
  });

  it('creates records with one audit entry each holding the new values', async () => {
    const projectId = await newProject();
    const result = await store.importRecords(projectId, [row('S001', 'v1', { age: 40, sex: '1' }), row('S001', 'v2', { age: null, sex: null })], { actor: 'dm.alice', reason: 'first export' });

    expect(result).toEqual({ created: 2, updated: 0, unchanged: 0 });
    const audit = await store.listAudit(projectId, { entityType: 'record', entityId: 'S001' });
    expect(audit.map((entry) => [entry.action, entry.actor, entry.reason, entry.oldValue, entry.newValue])).toEqual([
      ['record.create', 'dm.alice', 'first export', null, { eventName: 'v1', site: 'SITE-01', data: { age: 40, sex: '1' } }],
      ['record.create', 'dm.alice', 'first export', null, { eventName: 'v2', site: 'SITE-01', data: { age: null, sex: null } }],
    ]);
    expect(Date.parse(audit[0]!.at)).not.toBeNaN();
    expect((await store.getRecord(projectId, 'S001')).map((stored) => stored.version)).toEqual([1, 1]);
  });

  it('updates only changed rows, bumps their version and audits old and new value of each changed field', async () => {
    const projectId = await newProject();
    await store.importRecords(projectId, [row('S001', 'v1', { age: 40, sex: '1' }), row('S002', 'v1', { age: 50, sex: '2' })], { actor: 'dm.alice' });

    const result = await store.importRecords(projectId, [row('S001', 'v1', { age: 41, sex: '1' }), row('S002', 'v1', { age: 50, sex: '2' }), row('S003', 'v1', { age: 60, sex: '1' })], {
      actor: 'dm.bob',
      reason: 'site corrected age',
    });

    expect(result).toEqual({ created: 1, updated: 1, unchanged: 1 });
    const [s001] = await store.getRecord(projectId, 'S001');
    const [s002] = await store.getRecord(projectId, 'S002');
    expect([s001?.version, s001?.data.age, s002?.version]).toEqual([2, 41, 1]);
    const updates = (await store.listAudit(projectId, { entityType: 'record' })).filter((entry) => entry.action === 'record.update');
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ entityId: 'S001', actor: 'dm.bob', reason: 'site corrected age', oldValue: { eventName: 'v1', data: { age: 40 } }, newValue: { eventName: 'v1', data: { age: 41 } } });
  });

  it('records a site move in the update entry', async () => {
    const projectId = await newProject();
    await store.importRecords(projectId, [row('S001', 'v1', { age: 40 }, 'SITE-01')], { actor: 'dm.alice' });
    await store.importRecords(projectId, [row('S001', 'v1', { age: 40 }, 'SITE-02')], { actor: 'dm.alice' });
    const [update] = (await store.listAudit(projectId, { entityType: 'record' })).filter((entry) => entry.action === 'record.update');
    expect(update).toMatchObject({ oldValue: { site: 'SITE-01', data: {} }, newValue: { site: 'SITE-02', data: {} } });
  });

  it('treats a re-import with a new blank column as unchanged, so versions and audit stay as they are', async () => {
    const projectId = await newProject();
    await store.importRecords(projectId, [row('S001', 'v1', { age: 40 })], { actor: 'dm.alice' });
    const auditBefore = await store.listAudit(projectId);

    const result = await store.importRecords(projectId, [row('S001', 'v1', { age: 40, sex: null })], { actor: 'dm.alice' });

    expect(result).toEqual({ created: 0, updated: 0, unchanged: 1 });
    expect(await store.listAudit(projectId)).toEqual(auditBefore);
    expect((await store.getRecord(projectId, 'S001'))[0]?.version).toBe(1);
  });

  it('writes nothing, audit included, when one row of an import fails in the database', async () => {
    const projectId = await newProject();
    await store.importRecords(projectId, [row('S001', 'v1', { age: 40 })], { actor: 'dm.alice' });
    const recordsBefore = await store.listRecords(projectId);
    const auditBefore = await store.listAudit(projectId);

    // jsonb refuses U+0000: the update of S001 and the insert of S002 come before the failing row.
    const failing = store.importRecords(projectId, [row('S001', 'v1', { age: 41 }), row('S002', 'v1', { age: 50 }), row('S003', 'v1', { note: 'bad\u0000byte' })], { actor: 'dm.alice' });

    await expect(failing).rejects.toThrow();
    expect(await store.listRecords(projectId)).toEqual(recordsBefore);
    expect(await store.listAudit(projectId)).toEqual(auditBefore);
  });

  it('refuses duplicate rows and unknown projects before writing anything', async () => {
    const projectId = await newProject();
    await expect(store.importRecords(projectId, [row('S001', 'v1', {}), row('S001', 'v1', {})], { actor: 'dm.alice' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(store.importRecords('no-such-trial', [row('S001', 'v1', {})], { actor: 'dm.alice' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(store.replaceDictionary('no-such-trial', FIELDS, 'dm.alice')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.countRecords(projectId)).toEqual({ rows: 0, subjects: 0 });
  });

  it('lists records in natural record order and schedule order, filtered by site and record ids, paged', async () => {
    const projectId = await newProject();
    // Alphabetical order ("baseline" < "screening") is not schedule order.
    await store.replaceEvents(projectId, [{ eventName: 'screening', label: 'V0', dayOffset: -14, windowBefore: 0, windowAfter: 14 }, { eventName: 'baseline', label: 'V1', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'dm.alice');
    await store.importRecords(
      projectId,
      [row('S10', 'baseline', {}, 'SITE-02'), row('S10', 'screening', {}, 'SITE-02'), row('S9', 'baseline', {}), row('S9', 'screening', {}), row('S100', 'screening', {}, 'SITE-03')],
      { actor: 'dm.alice' },
    );

    const keys = (records: Array<{ recordId: string; eventName: string }>) => records.map((record) => `${record.recordId}/${record.eventName}`);
    expect(keys(await store.listRecords(projectId))).toEqual(['S9/screening', 'S9/baseline', 'S10/screening', 'S10/baseline', 'S100/screening']);
    expect(keys(await store.listRecords(projectId, { site: 'SITE-02' }))).toEqual(['S10/screening', 'S10/baseline']);
    expect(keys(await store.listRecords(projectId, { recordIds: ['S100', 'S9'] }))).toEqual(['S9/screening', 'S9/baseline', 'S100/screening']);
    expect(keys(await store.listRecords(projectId, { limit: 2, offset: 2 }))).toEqual(['S10/screening', 'S10/baseline']);
    expect(await store.listRecords(projectId, { recordIds: [] })).toEqual([]);
    expect(keys(await store.getRecord(projectId, 'S10'))).toEqual(['S10/screening', 'S10/baseline']);
    expect(await store.getRecord(projectId, 'S404')).toEqual([]);
    expect(await store.countRecords(projectId)).toEqual({ rows: 5, subjects: 3 });
    expect(await store.countRecords(projectId, { site: 'SITE-01' })).toEqual({ rows: 2, subjects: 1 });
    expect(await store.listSites(projectId)).toEqual([
      { site: 'SITE-01', subjects: 1 },
      { site: 'SITE-02', subjects: 1 },
      { site: 'SITE-03', subjects: 1 },
    ]);
    await expect(store.listRecords(projectId, { limit: -1 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'limit' } });
  });

  it('commits an audit entry with the caller\'s transaction, and drops it when that transaction rolls back', async () => {
    const projectId = await newProject();
    const entry = { projectId, entityType: 'query' as const, entityId: 'Q-1', action: 'query.open', actor: 'dm.alice', newValue: { status: 'open' }, reason: 'age out of range' };

    await withTransaction(db, (tx) => appendAudit(tx, entry));
    await expect(
      withTransaction(db, async (tx) => {
        await appendAudit(tx, { ...entry, entityId: 'Q-2' });
        throw new Error('the query write failed');
      }),
    ).rejects.toThrow('the query write failed');

    expect((await store.listAudit(projectId, { entityType: 'query' })).map((stored) => stored.entityId)).toEqual(['Q-1']);
    expect(await store.listAudit(projectId, { entityType: 'query', entityId: 'Q-1' })).toEqual([expect.objectContaining({ reason: 'age out of range', oldValue: null, newValue: { status: 'open' } })]);
    await expect(store.appendAudit({ ...entry, actor: ' ' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'actor' } });
  });

  it('rolls back every write of transaction() when its work fails', async () => {
    const projectId = await newProject();
    await expect(
      store.transaction(async (tx) => {
        await tx.replaceDictionary(projectId, FIELDS, 'dm.alice');
        await tx.importRecords(projectId, [row('S001', 'v1', { age: 40 })], { actor: 'dm.alice' });
        throw new Error('records file was rejected');
      }),
    ).rejects.toThrow('records file was rejected');

    expect(await store.getDictionary(projectId)).toEqual([]);
    expect(await store.countRecords(projectId)).toEqual({ rows: 0, subjects: 0 });
    expect((await store.listAudit(projectId)).map((entry) => entry.action)).toEqual(['project.create']);
  });
});
