import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { packageRoot } from '../../core/paths.js';
import { testEngines } from '../../testing/test-database.js';
import { useTrialStore } from '../../testing/trial-store-fixture.js';
import { checkRedcapCsv, importRedcapCsv, type RedcapCsvFiles } from './import-redcap-csv.js';
import { checkOdm, importOdm } from './odm/import-odm.js';
import { previewImport } from './preview-import.js';

const testFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', name), 'utf8');
const odm = testFile('project.odm.xml');
const csvFiles: RedcapCsvFiles = { dictionaryCsv: testFile('dictionary.csv'), eventsCsv: testFile('events.csv'), armsCsv: testFile('arms.csv'), recordsCsv: testFile('records.csv') };
const BASELINE_101 = '101,baseline_arm_1,site_a,,,,,2024-03-08,72.5,132,';

/** The error an import raised, or a failure naming what happened instead. */
async function rejectionOf(promise: Promise<unknown>): Promise<ClinAgentError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof ClinAgentError)) throw new Error(`expected a ClinAgentError, got ${String(error)}`);
  return error;
}

describe.each(testEngines())('previewImport on %s', (engine) => {
  const { store, newProject } = useTrialStore(engine, 'preview');
  /** Everything an import may touch, to prove a preview touched nothing. */
  const snapshot = async (projectId: string) => ({
    fields: await store.getDictionary(projectId),
    events: await store.getEvents(projectId),
    arms: await store.getArms(projectId),
    records: await store.listRecords(projectId),
    audit: await store.listAudit(projectId),
  });
  const previewCsv = (projectId: string, files: RedcapCsvFiles) => previewImport(store, projectId, () => checkRedcapCsv(store, projectId, files));


  it('previews a CSV export without writing, with the counts the import that follows reports', async () => {
    const projectId = await newProject();
    const before = await snapshot(projectId);
    const preview = await previewCsv(projectId, csvFiles);
    expect(await snapshot(projectId)).toEqual(before);

    expect(preview).toMatchObject({ importable: true, problemCount: 0, moreProblems: 0, problems: [] });
    const { forms, subjects, rows, rowsPerEvent, ...wouldImport } = preview.counts!;
    expect({ forms, subjects, rows }).toEqual({ forms: 3, subjects: 5, rows: 13 });

    const summary = await importRedcapCsv(store, projectId, csvFiles, 'dm.alice');
    expect(wouldImport).toEqual(summary);
    expect(summary.records.created).toBe(13);
    const stored = await store.listRecords(projectId);
    const storedPerEvent = (await store.getEvents(projectId)).map(({ eventName }) => ({ eventName, rows: stored.filter((row) => row.eventName === eventName).length }));
    expect(rowsPerEvent).toEqual(storedPerEvent);
  });

  it('counts rows as new, changed and unchanged against what is stored, and changed definitions', async () => {
    const projectId = await newProject();
    await importRedcapCsv(store, projectId, csvFiles, 'dm.alice');
    const again = await previewCsv(projectId, csvFiles);
    expect(again.counts).toMatchObject({ records: { created: 0, updated: 0, unchanged: 13 }, isDictionaryChanged: false, isEventsChanged: false, isArmsChanged: false });

    expect(csvFiles.recordsCsv).toContain(BASELINE_101);
    const records = `${String(csvFiles.recordsCsv).replace(BASELINE_101, '101,baseline_arm_1,site_a,,,,,2024-03-08,72.5,140,')}999,screening_arm_1,site_a,2024-03-02,1970-01-01,2,2,,,,,,,,,,,\n`;
    const dictionary = String(csvFiles.dictionaryCsv).replace('Date of informed consent', 'Date of consent');
    const before = await snapshot(projectId);
    const changed = await previewCsv(projectId, { ...csvFiles, dictionaryCsv: dictionary, recordsCsv: records, eventsCsv: undefined, armsCsv: undefined });
    expect(await snapshot(projectId)).toEqual(before);
    expect(changed.counts).toMatchObject({ events: 6, arms: 2, subjects: 6, rows: 14, records: { created: 1, updated: 1, unchanged: 12 }, isDictionaryChanged: true, isEventsChanged: false, isArmsChanged: false });
    const { forms, subjects, rows, rowsPerEvent, ...wouldImport } = changed.counts!;
    expect(wouldImport).toEqual(await importRedcapCsv(store, projectId, { ...csvFiles, dictionaryCsv: dictionary, recordsCsv: records, eventsCsv: undefined, armsCsv: undefined }, 'dm.alice'));
  });

  it('lists the problems of a bad CSV export as the import refuses it, writing nothing', async () => {
    const projectId = await newProject();
    const bad = { ...csvFiles, recordsCsv: String(csvFiles.recordsCsv).replace(BASELINE_101, '101,baseline_arm_1,site_a,,,,,2024-03-08,72.5,13x,').replace('weight', 'weigth') };
    const before = await snapshot(projectId);
    const preview = await previewCsv(projectId, bad);
    expect(await snapshot(projectId)).toEqual(before);
    const refused = await rejectionOf(importRedcapCsv(store, projectId, bad, 'dm.alice'));
    expect(refused.code).toBe('IMPORT_INVALID');
    expect(preview).toEqual({ importable: false, counts: null, ...(refused.details as object) });
    expect(preview.problemCount).toBeGreaterThanOrEqual(2);
    expect(preview.problems).toContainEqual(expect.objectContaining({ source: 'records.csv', line: 3, field: 'sbp', value: '13x' }));
    expect(await snapshot(projectId)).toEqual(before);
  });

  it('previews an ODM file with the counts of its import, and its problems by element', async () => {
    const projectId = await newProject();
    const before = await snapshot(projectId);
    const preview = await previewImport(store, projectId, () => checkOdm({ odm, fileName: 'project.odm.xml' }));
    expect(await snapshot(projectId)).toEqual(before);
    const { forms, subjects, rows, rowsPerEvent, ...wouldImport } = preview.counts!;
    expect({ forms, subjects, rows }).toEqual({ forms: 3, subjects: 5, rows: 13 });
    expect(rowsPerEvent.reduce((sum, event) => sum + event.rows, 0)).toBe(13);
    expect(wouldImport).toEqual(await importOdm(store, projectId, { odm, fileName: 'project.odm.xml' }, 'dm.alice'));

    const bad = { odm: odm.replace('<ItemData ItemOID="sbp" Value="132"/>', '<ItemData ItemOID="sbp" Value="13x"/>'), fileName: 'project.odm.xml' };
    const afterImport = await snapshot(projectId);
    const refusedPreview = await previewImport(store, projectId, () => checkOdm(bad));
    expect(await snapshot(projectId)).toEqual(afterImport);
    const refused = await rejectionOf(importOdm(store, projectId, bad, 'dm.alice'));
    expect(refusedPreview).toEqual({ importable: false, counts: null, ...(refused.details as object) });
    expect(refusedPreview.problems[0]).toMatchObject({ field: 'sbp', value: '13x', element: expect.stringContaining('ItemData[@ItemOID="sbp"] in SubjectData[@SubjectKey="101"]') });
  });

  it('refuses a file the import cannot read at all with the same error, not as a preview', async () => {
    const projectId = await newProject();
    const doctype = { odm: '<?xml version="1.0"?>\n<!DOCTYPE ODM [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<ODM>&x;</ODM>', fileName: 'project.odm.xml' };
    const fromPreview = await rejectionOf(previewImport(store, projectId, () => checkOdm(doctype)));
    const fromImport = await rejectionOf(importOdm(store, projectId, doctype, 'dm.alice'));
    expect({ code: fromPreview.code, message: fromPreview.message }).toEqual({ code: fromImport.code, message: fromImport.message });
    expect(fromPreview.code).not.toBe('IMPORT_INVALID');
  });
});
