import { create } from 'zustand';
import { api, type ImportPreview, type ImportSummary } from '../api';
import type { ImportFiles } from '../api/trial-api';
import { filesOf, missingParts, type ImportFormat, type ImportPart } from './import-files';
import { useTrialCatalogStore } from './trial-catalog';

interface TrialImportState {
  projectId: string | null;
  format: ImportFormat;
  files: ImportFiles;
  /** The preview of exactly the files chosen now; any change of file drops it. */
  preview: ImportPreview | null;
  summary: ImportSummary | null;
  isPreviewing: boolean;
  isImporting: boolean;
  error: unknown;
  /** Starts over for another project; the same project keeps its files and preview. */
  open(projectId: string): void;
  setFormat(format: ImportFormat): void;
  setFile(part: ImportPart, file: File | null): void;
  runPreview(): Promise<void>;
  runImport(): Promise<void>;
  reset(): void;
}

const EMPTY = { format: 'csv' as ImportFormat, files: {}, preview: null, summary: null, isPreviewing: false, isImporting: false, error: null };

/** Import is offered only for the files just previewed, and only when the preview found no problem. */
export function canImport(state: Pick<TrialImportState, 'preview' | 'summary' | 'isPreviewing' | 'isImporting'>): boolean {
  return state.preview?.importable === true && state.summary === null && !state.isPreviewing && !state.isImporting;
}

/** Whether the chosen files are enough to ask for a preview. */
export function canPreview(state: Pick<TrialImportState, 'format' | 'files' | 'isPreviewing' | 'isImporting'>): boolean {
  return missingParts(state.format, state.files).length === 0 && !state.isPreviewing && !state.isImporting;
}

/** One project's import: the files chosen, the server's preview of them, and the import that follows it. */
export const useTrialImportStore = create<TrialImportState>()((set, get) => ({
  projectId: null,
  ...EMPTY,
  open(projectId) {
    if (get().projectId !== projectId) set({ projectId, ...EMPTY });
  },
  setFormat(format) {
    set({ format, preview: null, summary: null, error: null });
  },
  setFile(part, file) {
    const files = { ...get().files };
    if (file) files[part] = file;
    else delete files[part];
    set({ files, preview: null, summary: null, error: null });
  },
  async runPreview() {
    const { projectId, format, files } = get();
    if (!projectId || !canPreview(get())) return;
    set({ isPreviewing: true, preview: null, summary: null, error: null });
    try {
      const preview = await api.trial.previewImport(projectId, filesOf(format, files));
      // The files may have changed while the server checked them: that preview is of other files.
      if (get().files === files && get().format === format) set({ preview });
    } catch (error) {
      set({ error });
    } finally {
      set({ isPreviewing: false });
    }
  },
  async runImport() {
    const { projectId, format, files } = get();
    if (!projectId || !canImport(get())) return;
    set({ isImporting: true, error: null });
    try {
      const summary = await api.trial.importFiles(projectId, filesOf(format, files));
      set({ summary });
      // Subject and row counts in the project bar change with every import.
      void useTrialCatalogStore.getState().load();
    } catch (error) {
      set({ error });
    } finally {
      set({ isImporting: false });
    }
  },
  reset() {
    set({ projectId: null, ...EMPTY });
  },
}));
