import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { REDCAP_DICTIONARY_HEADER, textFieldDictionary as dictionaryOf } from '../../testing/large-imports.js';
import { testEngines } from '../../testing/test-database.js';
import { useTrialStore } from '../../testing/trial-store-fixture.js';
import { jsonTable } from './csv-table.js';
import { IMPORT_LIMITS } from './import-limits.js';
import { importRedcapCsv } from './import-redcap-csv.js';
import { importOdm } from './odm/import-odm.js';
import { parseDictionaryTable } from './parse-dictionary.js';

/** Raises what `run` raises, so a test can look at the whole error. */
async function errorOf(run: () => Promise<unknown>): Promise<ClinAgentError> {
  try {
    await run();
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the import to be refused');
}

describe.each(testEngines())('REDCap imports at the edges (%s)', (engine) => {
  const { store, newProject } = useTrialStore(engine, 'limits');
  const snapshot = async (projectId: string) => ({
    fields: await store.getDictionary(projectId),
    records: await store.listRecords(projectId),
    audit: await store.listAudit(projectId),
  });


  it('imports a dictionary of 10 000 fields, and a second import of it changes nothing', async () => {
    const projectId = await newProject();
    const dictionaryCsv = dictionaryOf(10_000);
    const recordsCsv = 'record_id,f1,f9999\nS001,a,z\n';

    const summary = await importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv }, 'dm.alice');

    expect(summary).toMatchObject({ fields: 10_000, isDictionaryChanged: true, records: { created: 1 } });
    const stored = await store.getDictionary(projectId);
    expect(stored).toHaveLength(10_000);
    expect(stored.at(-1)).toMatchObject({ fieldName: 'f9999', label: 'Field 9999' });
    expect((await store.getRecord(projectId, 'S001'))[0]?.data).toEqual({ f1: 'a', f9999: 'z' });
    const again = await importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv }, 'dm.alice');
    expect(again).toMatchObject({ isDictionaryChanged: false, records: { unchanged: 1 } });
  }, 120_000);

  it('refuses a NUL in a field label with 400 naming file, line and column, and stores nothing', async () => {
    const projectId = await newProject();
    const before = await snapshot(projectId);
    const dictionaryCsv = dictionaryOf(5, (i) => (i === 3 ? 'Systolic\u0000 BP' : `Field ${i}`));

    const error = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv: 'record_id\nS001\n' }, 'dm.alice'));

    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(error.message).toContain('dictionary.csv line 5, column Field Label: contains a NUL character (\\u0000)');
    expect(error.details).toMatchObject({ source: 'dictionary.csv', problemCount: 1, problems: [{ source: 'dictionary.csv', line: 5, field: 'Field Label' }] });
    expect(await snapshot(projectId)).toEqual(before);
  });

  it('refuses a NUL in a record value and in a header cell alike', async () => {
    const projectId = await newProject();

    const inValue = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv: dictionaryOf(3), recordsCsv: 'record_id,f1\nS001,ok\nS002,"two\u0000"\n' }, 'dm.alice'));
    const inHeader = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv: dictionaryOf(3), recordsCsv: 'record_id,f\u00001\nS001,ok\n' }, 'dm.alice'));

    expect(inValue.status).toBe(400);
    expect(inValue.message).toContain('records.csv line 3, column f1: contains a NUL character');
    expect(inHeader.status).toBe(400);
    expect(inHeader.message).toContain('records.csv line 1, column (column 2): contains a NUL character');
    expect(await store.listRecords(projectId)).toEqual([]);
  });

  it('refuses an uploaded UTF-16 file holding half a surrogate pair: the decoder never passes one on', async () => {
    const projectId = await newProject();
    const text = dictionaryOf(3, () => 'Mood \ud83d');
    const utf16 = new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));

    const error = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv: utf16, recordsCsv: 'record_id\nS001\n', fileNames: { dictionary: 'dict.csv' } }, 'dm.alice'));

    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: { field: 'dictionary', filename: 'dict.csv' } });
    expect(error.message).toContain('is not valid UTF-16');
    expect(await store.getDictionary(projectId)).toEqual([]);
  });

  it('refuses the same in REDCap API answers (JSON), naming the source', () => {
    const items = [
      { field_name: 'record_id', form_name: 'baseline', field_type: 'text', field_label: 'Subject ID' },
      { field_name: 'mood', form_name: 'baseline', field_type: 'text', field_label: 'Mood \udc00' },
    ];

    expect(() => parseDictionaryTable(jsonTable(items, 'REDCap API metadata'))).toThrow('REDCap API metadata line 3, column field_label: contains a lone UTF-16 surrogate');
  });

  it('imports 250 values outside their bounds and names the first 100 of them, saying how many more', async () => {
    const projectId = await newProject();
    const dictionaryCsv = `${REDCAP_DICTIONARY_HEADER}\nrecord_id,baseline,,text,Subject ID,,,,,,,,\nage,baseline,,text,Age,,,integer,18,75,,,\n`;
    const rows = Array.from({ length: 250 }, (_, i) => `S${String(i).padStart(3, '0')},17`);

    const summary = await importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv: `record_id,age\n${rows.join('\n')}\n` }, 'dm.alice');

    expect(summary.records.created).toBe(250);
    expect(summary.warnings).toHaveLength(100);
    expect(summary.warnings[0]).toMatchObject({ line: 2, recordId: 'S000', field: 'age', value: 17 });
    expect(summary.moreWarnings).toBe(150);
  });

  it('lists at most 50 problems of a file with 200 000 bad columns, says how many more, and cuts long values', async () => {
    const projectId = await newProject();
    const columns = Array.from({ length: 200_000 }, (_, i) => `c${i}`);
    const recordsCsv = `record_id,${'x'.repeat(100_000)},${columns.join(',')}\nS001,${',v'.repeat(200_000)}\n`;

    const error = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv: dictionaryOf(3), recordsCsv }, 'dm.alice'));

    expect(error).toMatchObject({ code: 'IMPORT_INVALID', details: { problemCount: 200_001 } });
    const problems = error.details.problems as Array<{ field: string; value: string; problem: string }>;
    expect(problems).toHaveLength(50);
    expect(error.details.moreProblems).toBe(199_951);
    expect(error.message).toContain('... and 199981 more');
    expect(Math.max(...problems.map((p) => p.field.length + p.value.length + p.problem.length))).toBeLessThan(1000);
    expect(JSON.stringify(error.toJSON()).length).toBeLessThan(64 * 1024);
  });

  it('refuses a dictionary over the field limit and an ODM file over the element limit with 413, naming the limit and how to split the file', async () => {
    const projectId = await newProject();

    const wide = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv: dictionaryOf(IMPORT_LIMITS.dictionaryFields + 2), recordsCsv: 'record_id\nS001\n', fileNames: { dictionary: 'huge_dictionary.csv' } }, 'dm.alice'));
    expect(wide).toMatchObject({ code: 'UPLOAD_TOO_LARGE', status: 413, details: { source: 'huge_dictionary.csv', limit: 'dictionaryFields', max: 20_000 } });
    expect(wide.message).toContain('huge_dictionary.csv has more than 20,000 fields, the most one import reads (limit dictionaryFields)');

    const elements = `<ODM><Study OID="S"><MetaDataVersion OID="v1"/></Study><ClinicalData StudyOID="S" MetaDataVersionOID="v1">${'<a/>'.repeat(IMPORT_LIMITS.odmElements)}</ClinicalData></ODM>`;
    const deep = await errorOf(() => importOdm(store, projectId, { odm: elements, fileName: 'export.xml' }, 'dm.alice'));
    expect(deep).toMatchObject({ code: 'UPLOAD_TOO_LARGE', status: 413, details: { source: 'export.xml', limit: 'odmElements', max: 2_000_000 } });
    expect(deep.message).toMatch(/limit odmElements\); nothing was imported\. Export the clinical data in parts/);
    expect(await snapshot(projectId)).toMatchObject({ fields: [], records: [] });
  }, 120_000);

  it('refuses a records file over the row limit, and one over the cell limit, with 413 naming the limit and how to split it', async () => {
    const projectId = await newProject();
    const dictionaryCsv = dictionaryOf(3);

    // Issue 32 asked for element, field and row limits named in the error; rows are record x event lines.
    const tall = `record_id\n${'S1\n'.repeat(IMPORT_LIMITS.recordRows + 1)}`;
    const rows = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv: tall, fileNames: { records: 'all_visits.csv' } }, 'dm.alice'));
    expect(rows).toMatchObject({ code: 'UPLOAD_TOO_LARGE', status: 413, details: { source: 'all_visits.csv', limit: 'recordRows', max: 500_000 } });
    expect(rows.message).toContain('all_visits.csv has more than 500,000 rows, the most one import reads (limit recordRows); nothing was imported. Export the records in parts');

    // Under the row limit but wide: 2 000 empty columns a row, 5 001 rows, a little over ten million cells.
    const columns = 2_000;
    const rowsOfCells = Math.floor(IMPORT_LIMITS.recordCells / columns) + 1;
    const wide = `record_id${',f'.repeat(columns - 1)}\n${`S1${','.repeat(columns - 1)}\n`.repeat(rowsOfCells)}`;
    const cells = await errorOf(() => importRedcapCsv(store, projectId, { dictionaryCsv, recordsCsv: wide, fileNames: { records: 'wide_export.csv' } }, 'dm.alice'));
    expect(cells).toMatchObject({ code: 'UPLOAD_TOO_LARGE', status: 413, details: { source: 'wide_export.csv', limit: 'recordCells', max: 10_000_000 } });
    expect(cells.message).toContain('wide_export.csv has more than 10,000,000 cells (rows x columns), the most one import reads (limit recordCells)');
    expect(await snapshot(projectId)).toMatchObject({ fields: [], records: [] });
  }, 120_000);
});
