import { readFileSync } from 'node:fs';
import path from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { packageRoot } from '../../core/paths.js';
import { testEngines } from '../../testing/test-database.js';
import { useTrialStore } from '../../testing/trial-store-fixture.js';
import { importRedcapCsv } from './import-redcap-csv.js';

const readTrialTestFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name), 'utf8');
const dictionaryCsv = readTrialTestFile('redcap-dictionary.csv');
const eventsCsv = readTrialTestFile('redcap-events.csv');
const recordsCsv = readTrialTestFile('redcap-records.csv');

describe.each(testEngines())('importRedcapCsv on %s', (engine) => {
  const { store, newProject } = useTrialStore(engine, 'csv');
  /** Everything an import may touch, to prove a refused import touched nothing. */
  const snapshot = async (projectId: string) => ({
    fields: await store.getDictionary(projectId),
    events: await store.getEvents(projectId),
    records: await store.listRecords(projectId),
    audit: await store.listAudit(projectId),
  });


  it('imports dictionary, events and records of a REDCap export in one go', async () => {
    const projectId = await newProject();
    const summary = await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv, recordsCsv }, 'dm.alice', { reason: 'site 02 export' });

    expect(summary).toEqual({ fields: 12, events: 2, arms: 0, records: { created: 4, updated: 0, unchanged: 0 }, isDictionaryChanged: true, isEventsChanged: true, isArmsChanged: false, warnings: [] });
    expect((await store.getDictionary(projectId)).find((field) => field.fieldName === 'age')?.label).toBe('年龄（岁）Age, years');
    expect(await store.listSites(projectId)).toEqual([
      { site: 'site_01', subjects: 1 },
      { site: 'site_02', subjects: 1 },
    ]);
    const audit = await store.listAudit(projectId);
    expect(audit.map((entry) => entry.action)).toEqual(['project.create', 'dictionary.replace', 'events.replace', 'record.create', 'record.create', 'record.create', 'record.create']);
    expect(audit.every((entry) => entry.entityType === 'project' || entry.reason === 'site 02 export')).toBe(true);
  });

  it('changes nothing on a second import of the same files', async () => {
    const projectId = await newProject();
    await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv, recordsCsv }, 'dm.alice');
    const before = await snapshot(projectId);

    const summary = await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv, recordsCsv }, 'dm.alice');

    expect(summary).toMatchObject({ records: { created: 0, updated: 0, unchanged: 4 }, isDictionaryChanged: false, isEventsChanged: false });
    expect(await snapshot(projectId)).toEqual(before);
  });

  it('audits a corrected value with its old and new value', async () => {
    const projectId = await newProject();
    await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv, recordsCsv }, 'dm.alice');
    const corrected = recordsCsv.replace('S002,v1_arm_1,site_02,2025-03-05,,2', 'S002,v1_arm_1,site_02,2025-03-05,58,2');

    const summary = await importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv: corrected }, 'dm.bob', { reason: 'age entered after query Q-12' });

    expect(summary.records).toEqual({ created: 0, updated: 1, unchanged: 3 });
    const updates = (await store.listAudit(projectId, { entityType: 'record', entityId: 'S002' })).filter((entry) => entry.action === 'record.update');
    expect(updates).toEqual([
      expect.objectContaining({ actor: 'dm.bob', reason: 'age entered after query Q-12', oldValue: { eventName: 'v1_arm_1', data: { age: null } }, newValue: { eventName: 'v1_arm_1', data: { age: 58 } } }),
    ]);
  });

  it('writes nothing from any file, audit included, when the records file has a problem', async () => {
    const projectId = await newProject();
    await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv, recordsCsv }, 'dm.alice');
    const before = await snapshot(projectId);
    // A changed dictionary and schedule that would be written if the import were not all-or-nothing.
    const newDictionary = dictionaryCsv.replace('integer,0,120', 'integer,0,130');
    const newEvents = eventsCsv.replace('28,3,3', '28,4,4');
    // Spreadsheet line 3, though text line 4: the row above holds a cell with a line break.
    const badRecords = recordsCsv.replace('S001,v2_arm_1,site_01,,,', 'S001,v2_arm_1,site_01,,forty,');

    const failing = importRedcapCsv(store, projectId, { dictionaryCsv: newDictionary, eventsCsv: newEvents, recordsCsv: badRecords }, 'dm.alice');

    await expect(failing).rejects.toSatisfy((error) => ClinAgentError.isInstance(error) && error.code === 'IMPORT_INVALID' && error.message.includes('records.csv line 3, field age: "forty" is not an integer'));
    expect(await snapshot(projectId)).toEqual(before);
  });

  it('does not check records against a broken dictionary, and says so', async () => {
    const projectId = await newProject();
    const brokenDictionary = dictionaryCsv.replace('sbp,visit,,text', 'sbp,visit,,texty');

    const failing = importRedcapCsv(store, projectId, { dictionaryCsv: brokenDictionary, eventsCsv, recordsCsv }, 'dm.alice');

    await expect(failing).rejects.toMatchObject({ code: 'IMPORT_INVALID', details: { problemCount: 2 } });
    await expect(failing).rejects.toThrow(/dictionary\.csv line 11, field Field Type: "texty" is not a REDCap field type/);
    await expect(failing).rejects.toThrow(/records\.csv line 1, field \(file\): not checked yet/);
    expect((await snapshot(projectId)).fields).toEqual([]);
  });

  it('checks records against the stored schedule when no events file is given', async () => {
    const projectId = await newProject();
    await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv, recordsCsv }, 'dm.alice');
    const withV3 = `${recordsCsv}S001,v3_arm_1,site_01,,,,,,,,,,2025-04-30,135,71.0,0,,2\r\n`;

    await expect(importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv: withV3 }, 'dm.alice')).rejects.toThrow(
      'records.csv line 6, field redcap_event_name: "v3_arm_1" is not an event of the project (v1_arm_1, v2_arm_1)',
    );
  });

  it("imports REDCap 14's event and arms exports, keeping each event's arm", async () => {
    const projectId = await newProject();
    const summary = await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv: readTrialTestFile('redcap14-events-scheduled.csv'), armsCsv: readTrialTestFile('redcap14-arms.csv'), recordsCsv }, 'dm.alice');

    expect(summary).toMatchObject({ events: 4, arms: 2, isArmsChanged: true, records: { created: 4 } });
    expect(await store.getArms(projectId)).toEqual([{ armNum: 1, name: 'Drug 药物组' }, { armNum: 2, name: 'Placebo 安慰剂组' }]);
    expect((await store.getEvents(projectId)).map((event) => [event.eventName, event.armNum, event.dayOffset, event.windowBefore, event.windowAfter])).toEqual([
      ['v1_arm_1', 1, 0, 0, 0],
      ['v2_arm_1', 1, 28, 3, 3],
      ['v1_arm_2', 2, 0, 0, 0],
      ['v2_arm_2', 2, 28, 3, 3],
    ]);
    expect((await store.listAudit(projectId, { entityType: 'project' })).map((entry) => entry.action)).toEqual(['project.create', 'dictionary.replace', 'arms.replace', 'events.replace']);

    // Without day offsets (no scheduling in REDCap 14) every event is day 0 with no window.
    const unscheduled = await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv: readTrialTestFile('redcap14-events.csv'), armsCsv: readTrialTestFile('redcap14-arms.csv'), recordsCsv }, 'dm.alice');
    expect(unscheduled).toMatchObject({ events: 5, isEventsChanged: true, isArmsChanged: false });
    expect((await store.getEvents(projectId)).find((event) => event.eventName === 'v2_arm_2')).toEqual({ eventName: 'v2_arm_2', label: 'V2 Week 4', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 2 });
  });

  it('refuses events in an arm the arms file does not define, and writes nothing', async () => {
    const projectId = await newProject();
    const oneArm = 'arm_num,name\n1,"Drug 药物组"\n';

    const failing = importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv: readTrialTestFile('redcap14-events.csv'), armsCsv: oneArm, recordsCsv }, 'dm.alice');

    await expect(failing).rejects.toMatchObject({ code: 'IMPORT_INVALID', status: 422 });
    await expect(failing).rejects.toThrow('events.csv line 5, field arm_num: the event is in arm 2, but arms.csv defines only arm 1');
    expect(await snapshot(projectId)).toMatchObject({ fields: [], events: [], records: [] });
    expect(await store.getArms(projectId)).toEqual([]);

    // An arms file alone must still cover the stored schedule.
    await importRedcapCsv(store, projectId, { dictionaryCsv, eventsCsv: readTrialTestFile('redcap14-events.csv'), armsCsv: readTrialTestFile('redcap14-arms.csv'), recordsCsv }, 'dm.alice');
    await expect(importRedcapCsv(store, projectId, { dictionaryCsv, armsCsv: oneArm, recordsCsv }, 'dm.alice')).rejects.toThrow(/arms\.csv line 1, field arm_num: the project's stored events v1_arm_2, v2_arm_2 are in arm 2/);
  });

  it('imports a value outside the validation min/max and returns a warning naming line, record, event and field', async () => {
    const projectId = await newProject();
    const adultsOnly = dictionaryCsv.replace('integer,0,120', 'integer,18,75');
    const seventeen = recordsCsv.replace('S002,v1_arm_1,site_02,2025-03-05,,2', 'S002,v1_arm_1,site_02,2025-03-05,17,2');

    const summary = await importRedcapCsv(store, projectId, { dictionaryCsv: adultsOnly, eventsCsv, recordsCsv: seventeen }, 'dm.alice');

    expect(summary.records.created).toBe(4);
    expect(summary.warnings).toEqual([
      { line: 4, recordId: 'S002', event: 'v1_arm_1', field: 'age', value: 17, min: '18', max: '75', message: 'records.csv line 4, field age: 17 is below the validation minimum 18; imported, QC will report it' },
    ]);
    expect((await store.getRecord(projectId, 'S002')).find((row) => row.eventName === 'v1_arm_1')?.data.age).toBe(17);
  });

  it('decodes files saved by Excel on Chinese Windows (GB18030) and stores the Chinese text, not mojibake', async () => {
    const projectId = await newProject();
    const gb = (text: string) => new Uint8Array(iconv.encode(text.replace(/^\uFEFF/, ''), 'gb18030'));

    await importRedcapCsv(store, projectId, { dictionaryCsv: gb(dictionaryCsv), eventsCsv: gb(eventsCsv), recordsCsv: gb(recordsCsv) }, 'dm.alice');

    const fields = await store.getDictionary(projectId);
    expect(fields.find((field) => field.fieldName === 'age')?.label).toBe('年龄（岁）Age, years');
    expect(fields.find((field) => field.fieldName === 'sex')?.choices).toEqual([{ code: '1', label: '男 Male' }, { code: '2', label: '女 Female' }]);
    expect((await store.getEvents(projectId))[1]?.label).toBe('V2 第4周 Week 4');
    expect((await store.getRecord(projectId, 'S001'))[0]?.data.notes).toBe('第一行 line one\r\nline two, with "quotes"');
  });

  it('refuses a file in another legacy encoding by name, before checking any line', async () => {
    const projectId = await newProject();
    const big5 = new Uint8Array(iconv.encode(dictionaryCsv.replace(/^\uFEFF/, ''), 'big5'));

    const failing = importRedcapCsv(store, projectId, { dictionaryCsv: big5, recordsCsv, fileNames: { dictionary: '字典.csv' } }, 'dm.alice');

    await expect(failing).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'dictionary', filename: '字典.csv' } });
    await expect(failing).rejects.toThrow('The file "字典.csv" sent as "dictionary" is not UTF-8 text and not recognisably GBK/GB18030');
    expect((await snapshot(projectId)).fields).toEqual([]);
  });

  it('refuses an unknown project with NOT_FOUND', async () => {
    await expect(importRedcapCsv(store, 'no-such-trial', { dictionaryCsv, eventsCsv, recordsCsv }, 'dm.alice')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
