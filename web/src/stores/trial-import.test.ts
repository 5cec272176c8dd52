import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, type ImportPreview, type ImportSummary } from '../api';
import { filesOf, missingParts } from './import-files';
import { canImport, canPreview, useTrialImportStore } from './trial-import';
import { useTrialCatalogStore } from './trial-catalog';

const file = (name: string) => new File(['x'], name);
const records = { created: 13, updated: 0, unchanged: 0 };
const summary: ImportSummary = { fields: 11, events: 6, arms: 2, records, isDictionaryChanged: true, isEventsChanged: true, isArmsChanged: true, warnings: [] };
const importable: ImportPreview = { importable: true, counts: { ...summary, forms: 3, subjects: 5, rows: 13, rowsPerEvent: [{ eventName: 'baseline_arm_1', rows: 13 }] }, problemCount: 0, moreProblems: 0, problems: [] };
const refused: ImportPreview = { importable: false, counts: null, problemCount: 1, moreProblems: 0, problems: [{ source: 'records.csv', line: 3, field: 'sbp', value: '13x', problem: '"13x" is not an integer' }] };

describe('the import files helpers', () => {
  it('names the required files still missing for each format', () => {
    expect(missingParts('csv', {})).toEqual(['dictionary', 'records']);
    expect(missingParts('csv', { dictionary: file('d.csv'), events: file('e.csv') })).toEqual(['records']);
    expect(missingParts('odm', { dictionary: file('d.csv'), records: file('r.csv') })).toEqual(['odm']);
    expect(missingParts('odm', { odm: file('p.xml') })).toEqual([]);
  });

  it('sends only the files of the chosen format', () => {
    const files = { dictionary: file('d.csv'), records: file('r.csv'), odm: file('p.xml') };
    expect(Object.keys(filesOf('csv', files))).toEqual(['dictionary', 'records']);
    expect(Object.keys(filesOf('odm', files))).toEqual(['odm']);
  });
});

describe('the import store', () => {
  let preview: ReturnType<typeof vi.spyOn>;
  let importFiles: ReturnType<typeof vi.spyOn>;

  beforeEach(() => {
    useTrialImportStore.getState().reset();
    useTrialImportStore.getState().open('p1');
    preview = vi.spyOn(api.trial, 'previewImport').mockResolvedValue(importable);
    importFiles = vi.spyOn(api.trial, 'importFiles').mockResolvedValue(summary);
    vi.spyOn(useTrialCatalogStore.getState(), 'load').mockResolvedValue();
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('previews the chosen files, and offers Import only after a preview without problems', async () => {
    const store = useTrialImportStore.getState();
    expect(canPreview(useTrialImportStore.getState())).toBe(false);
    store.setFile('dictionary', file('d.csv'));
    store.setFile('records', file('r.csv'));
    expect(canPreview(useTrialImportStore.getState())).toBe(true);
    expect(canImport(useTrialImportStore.getState())).toBe(false);

    await store.runPreview();
    expect(preview).toHaveBeenCalledWith('p1', { dictionary: expect.any(File), records: expect.any(File) });
    expect(useTrialImportStore.getState().preview).toEqual(importable);
    expect(canImport(useTrialImportStore.getState())).toBe(true);

    await store.runImport();
    expect(importFiles).toHaveBeenCalledWith('p1', { dictionary: expect.any(File), records: expect.any(File) });
    expect(useTrialImportStore.getState().summary).toEqual(summary);
    expect(useTrialCatalogStore.getState().load).toHaveBeenCalled();
    expect(canImport(useTrialImportStore.getState())).toBe(false);
  });

  it('does not import a preview with problems, nor files changed since their preview', async () => {
    preview.mockResolvedValueOnce(refused);
    const store = useTrialImportStore.getState();
    store.setFormat('odm');
    store.setFile('odm', file('p.xml'));
    await store.runPreview();
    expect(useTrialImportStore.getState().preview).toEqual(refused);
    expect(canImport(useTrialImportStore.getState())).toBe(false);
    await store.runImport();
    expect(importFiles).not.toHaveBeenCalled();

    await store.runPreview();
    expect(canImport(useTrialImportStore.getState())).toBe(true);
    store.setFile('odm', file('fixed.xml'));
    expect(useTrialImportStore.getState().preview).toBeNull();
    expect(canImport(useTrialImportStore.getState())).toBe(false);
  });

  it('drops a preview that answers after the files were changed, and keeps the server error', async () => {
    let answer: (value: ImportPreview) => void = () => {};
    preview.mockImplementationOnce(() => new Promise<ImportPreview>((resolve) => (answer = resolve)));
    const store = useTrialImportStore.getState();
    store.setFormat('odm');
    store.setFile('odm', file('p.xml'));
    const pending = store.runPreview();
    store.setFile('odm', file('other.xml'));
    answer(importable);
    await pending;
    expect(useTrialImportStore.getState().preview).toBeNull();

    preview.mockRejectedValueOnce(new Error('The ODM file "p.xml" is not UTF-8 text'));
    await store.runPreview();
    expect(useTrialImportStore.getState()).toMatchObject({ preview: null, isPreviewing: false, error: new Error('The ODM file "p.xml" is not UTF-8 text') });
  });

  it('starts over for another project and keeps the files for the same one', () => {
    const store = useTrialImportStore.getState();
    store.setFile('records', file('r.csv'));
    store.open('p1');
    expect(useTrialImportStore.getState().files.records).toBeDefined();
    store.open('p2');
    expect(useTrialImportStore.getState()).toMatchObject({ projectId: 'p2', files: {}, preview: null });
  });
});
