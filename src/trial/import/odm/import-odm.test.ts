import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../../core/errors.js';
import { packageRoot } from '../../../core/paths.js';
import { testEngines } from '../../../testing/test-database.js';
import { useTrialStore } from '../../../testing/trial-store-fixture.js';
import { importRedcapCsv } from '../import-redcap-csv.js';
import type { ImportWarning } from '../problems.js';
import { importOdm } from './import-odm.js';

const testFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', name), 'utf8');
const odm = testFile('project.odm.xml');
const csvFiles = { dictionaryCsv: testFile('dictionary.csv'), eventsCsv: testFile('events.csv'), armsCsv: testFile('arms.csv'), recordsCsv: testFile('records.csv') };

/** The IMPORT_INVALID error an import raised, or a failure naming what happened instead. */
async function importError(promise: Promise<unknown>): Promise<ClinAgentError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof ClinAgentError)) throw new Error(`expected a ClinAgentError, got ${String(error)}`);
  return error;
}

const problemsOf = (error: ClinAgentError) => (error.details as { problems: Array<{ source: string; line: number; element: string; field: string; value: string; problem: string }> }).problems;
const comparable = (warnings: ReadonlyArray<ImportWarning>) => warnings.map(({ recordId, event, field, value, min, max }) => ({ recordId, event, field, value, min, max }));

describe.each(testEngines())('importOdm on %s', (engine) => {
  const { store, newProject } = useTrialStore(engine, 'odm');
  const stored = async (projectId: string) => ({
    fields: await store.getDictionary(projectId),
    events: await store.getEvents(projectId),
    arms: await store.getArms(projectId),
    records: (await store.listRecords(projectId)).map(({ recordId, eventName, site, data }) => ({ recordId, eventName, site, data })),
  });


  it('imports a REDCap ODM export to the same dictionary, arms, events, records and values as its CSV export', async () => {
    const fromCsv = await newProject();
    const fromOdm = await newProject();
    const csvSummary = await importRedcapCsv(store, fromCsv, csvFiles, 'dm.alice');
    const odmSummary = await importOdm(store, fromOdm, { odm, fileName: 'project.odm.xml' }, 'dm.alice');

    expect(odmSummary).toMatchObject({ fields: 11, events: 6, arms: 2, records: { created: 13, updated: 0, unchanged: 0 }, isDictionaryChanged: true, isEventsChanged: true, isArmsChanged: true });
    expect({ ...odmSummary, warnings: comparable(odmSummary.warnings) }).toEqual({ ...csvSummary, warnings: comparable(csvSummary.warnings) });
    expect(comparable(odmSummary.warnings)).toEqual([{ recordId: '102', event: 'baseline_arm_1', field: 'weight', value: 250, min: '30', max: '200' }]);
    expect(odmSummary.warnings[0]!.message).toMatch(/^project\.odm\.xml line \d+, ItemData\[@ItemOID="weight"\] in SubjectData\[@SubjectKey="102"\]\/StudyEventData\[@StudyEventOID="Event\.baseline_arm_1"\], field weight: 250 is above the validation maximum 200/);

    const odmStored = await stored(fromOdm);
    expect(odmStored).toEqual(await stored(fromCsv));
    // Spot checks that the two agree on the right things, not merely on each other.
    expect(odmStored.arms).toEqual([{ armNum: 1, name: 'Treatment' }, { armNum: 2, name: 'Control' }]);
    expect(odmStored.events.find((event) => event.eventName === 'week4_arm_2')).toMatchObject({ label: 'Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3, armNum: 2 });
    expect(odmStored.fields.find((field) => field.fieldName === 'symptoms')).toMatchObject({ formName: 'vitals', fieldType: 'checkbox', choices: [{ code: '1', label: 'Headache' }, { code: '2', label: 'Dizziness' }, { code: '3', label: 'Nausea, vomiting' }] });
    expect(odmStored.fields.find((field) => field.fieldName === 'dob')).toMatchObject({ fieldType: 'date', identifier: true });
    expect(odmStored.fields.find((field) => field.fieldName === 'sex')).toMatchObject({ label: '性别 Sex', fieldType: 'radio', required: true });
    const baseline101 = odmStored.records.find((record) => record.recordId === '101' && record.eventName === 'baseline_arm_1');
    expect(baseline101).toMatchObject({ site: 'site_a', data: { weight: 72.5, sbp: 132, symptoms___1: '1', symptoms___2: '0', smoker: '0', vitals_complete: '2', lab_notes: 'Sample "haemolysed", redrawn\nsame day & <ok>', consent_date: null } });
    expect(odmStored.records.find((record) => record.recordId === '202')?.site).toBe('');
  });

  it('changes nothing when the ODM export of a project imported from CSV is imported over it', async () => {
    const projectId = await newProject();
    await importRedcapCsv(store, projectId, csvFiles, 'dm.alice');
    const summary = await importOdm(store, projectId, { odm: new TextEncoder().encode(odm) }, 'dm.alice');
    expect(summary).toMatchObject({ records: { created: 0, updated: 0, unchanged: 13 }, isDictionaryChanged: false, isEventsChanged: false, isArmsChanged: false });
  });

  it('reports an undefined ItemOID, a bad date and a value outside its code list by element and field, and writes nothing', async () => {
    const projectId = await newProject();
    const broken = odm
      .replace('<ItemData ItemOID="dob" Value="1961-05-12"/>', '<ItemData ItemOID="dob" Value="1961-02-30"/>')
      .replace('<ItemData ItemOID="sex" Value="1"/>', '<ItemData ItemOID="sex" Value="3"/>\n<ItemData ItemOID="height" Value="171"/>');
    const error = await importError(importOdm(store, projectId, { odm: broken, fileName: 'site.xml' }, 'dm.alice'));

    expect(error.code).toBe('IMPORT_INVALID');
    const subject = 'in SubjectData[@SubjectKey="101"]/StudyEventData[@StudyEventOID="Event.screening_arm_1"]';
    expect(problemsOf(error).map(({ element, field, value }) => ({ element, field, value }))).toEqual([
      { element: `ItemData[@ItemOID="dob"] ${subject}`, field: 'dob', value: '1961-02-30' },
      { element: `ItemData[@ItemOID="sex"] ${subject}`, field: 'sex', value: '3' },
      { element: `ItemData[@ItemOID="height"] ${subject}`, field: 'height', value: '171' },
    ]);
    const [date, code, unknown] = problemsOf(error);
    expect(date!.problem).toContain('is not a date');
    expect(code!.problem).toBe('"3" is not one of the choice codes 1, 2');
    expect(unknown!.problem).toContain('not the OID of any ItemDef');
    const lineOf = (text: string) => broken.split('\n').findIndex((line) => line.includes(text)) + 1;
    expect(problemsOf(error).map((problem) => problem.line)).toEqual([lineOf('"1961-02-30"'), lineOf('Value="3"'), lineOf('"height"')]);
    expect(error.message).toContain(`site.xml line ${lineOf('"height"')}, ItemData[@ItemOID="height"] ${subject}, field height:`);
    expect(await store.getDictionary(projectId)).toEqual([]);
    expect(await store.listRecords(projectId)).toEqual([]);
    expect((await store.listAudit(projectId)).map((entry) => entry.action)).toEqual(['project.create']);
  });

  it('refuses a file that is not UTF-8 with advice about exporting ODM, not saving CSV', async () => {
    const projectId = await newProject();
    const latin1 = Uint8Array.from([...new TextEncoder().encode('<ODM><Study OID="Z'), 0xfc, 0x72, 0x69, 0x63, 0x68, ...new TextEncoder().encode('"/></ODM>')]);
    const error = await importError(importOdm(store, projectId, { odm: latin1, fileName: 'zurich.xml' }, 'dm.alice'));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toBe('The ODM file "zurich.xml" is not UTF-8 text, so it was not imported: its labels and values would be stored garbled. Export it again from the EDC (ODM exports are UTF-8) and upload it without opening and saving it in another program.');
  });

  it('refuses a file with a DOCTYPE before reading any entity, and writes nothing', async () => {
    const projectId = await newProject();
    const laughs = `<?xml version="1.0"?>
<!DOCTYPE ODM [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY xxe SYSTEM "file:///etc/passwd">
]>
<ODM><Study OID="S"><MetaDataVersion OID="M"><ItemDef OID="I" Name="&xxe;&lol2;" DataType="text"/></MetaDataVersion></Study></ODM>`;
    const error = await importError(importOdm(store, projectId, { odm: laughs, fileName: 'evil.xml' }, 'dm.alice'));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toMatch(/^evil\.xml has a DOCTYPE declaration \(line 2\).*delete the <!DOCTYPE \.\.\.> declaration/);
    expect(error.message).not.toContain('lollol');
    expect((await store.listAudit(projectId)).map((entry) => entry.action)).toEqual(['project.create']);
  });
});
