import { ClinAgentError } from '../../core/errors.js';
import type { Skill } from '../sop/load-skills.js';
import { rulesAffectedByDictionary, type RuleAffected } from '../skill-tools/dictionary-impact.js';
import { baseFieldName } from '../identifiers.js';
import type { ChangedValue } from '../store/import-records.js';
import type { TrialStore } from '../store/trial-store.js';
import type { ImportProblem } from './problems.js';
import { listedWarnings, type TrialExport, type TrialImportSummary } from './write-trial-export.js';

/** What importing a checked export would write, counted against what the project holds now. */
interface ImportPreviewCounts extends TrialImportSummary {
  /** Distinct forms (instruments) of the dictionary. */
  forms: number;
  /** Distinct record ids, and (record, event) rows, in the export. */
  subjects: number;
  rows: number;
  /** Rows of the export per event, in schedule order; a classic project's one entry has eventName ''. */
  rowsPerEvent: Array<{ eventName: string; rows: number }>;
}

/**
 * An import preview: `counts` when the export would import, else the problems exactly as the import would
 * refuse it (the first fifty, `problemCount` in all; ODM problems also name their element).
 */
export interface ImportPreview {
  importable: boolean;
  counts: ImportPreviewCounts | null;
  problemCount: number;
  moreProblems: number;
  problems: ImportProblem[];
  /** Importable previews only: rules of the project's skills reading a field the new dictionary removes or changes. */
  rulesAffected?: RuleAffected[];
  /**
   * Importable previews only: the values the import would change in stored rows (the first hundred), so "3 changed"
   * can be checked before importing. An identifier field's values are null and `masked` for whoever may not see them.
   */
  changes?: { values: Array<ChangedValue & { masked?: boolean }>; moreValues: number };
}

interface PreviewOptions {
  /** Whether the one previewing may see identifier fields' values (the import itself needs no such right). */
  mayViewIdentifiers?: boolean;
}

/**
 * Runs an import's own check (`check` is the function the import itself calls before writing) and answers
 * what the import would do, writing nothing: no records, no definitions, no audit entries. New, changed and
 * unchanged rows and definitions are decided by the store's own comparisons, so the counts are the ones the
 * import then reports. Errors other than IMPORT_INVALID (an undecodable file, a DOCTYPE) are thrown as the
 * import throws them. `skills` are those applying to the project, whose rules the new dictionary may affect.
 */
export async function previewImport(store: TrialStore, projectId: string, check: () => TrialExport | Promise<TrialExport>, skills: readonly Skill[] = [], options: PreviewOptions = {}): Promise<ImportPreview> {
  let data: TrialExport;
  try {
    data = await check();
  } catch (error) {
    if (ClinAgentError.isInstance(error) && error.code === 'IMPORT_INVALID') return refusedPreview(error);
    throw error;
  }
  const [comparison, changes, storedEvents, storedArms, storedFields] = await Promise.all([
    store.compareRecords(projectId, data.records),
    store.definitionChanges(projectId, data),
    // As the import does: without an events or arms file, the stored ones stay.
    data.events ?? store.getEvents(projectId),
    data.arms ?? store.getArms(projectId),
    store.getDictionary(projectId),
  ]);
  const counts: ImportPreviewCounts = {
    fields: data.fields.length,
    forms: new Set(data.fields.map((field) => field.formName)).size,
    events: storedEvents.length,
    arms: storedArms.length,
    subjects: new Set(data.records.map((record) => record.recordId)).size,
    rows: data.records.length,
    rowsPerEvent: rowsPerEvent(data.records, storedEvents),
    records: { created: comparison.created, updated: comparison.updated, unchanged: comparison.unchanged },
    ...changes,
    ...listedWarnings(data.warnings),
  };
  // A field that is an identifier in the stored dictionary or in the new one is masked alike.
  const identifiers = new Set([...storedFields, ...data.fields].filter((field) => field.identifier).map((field) => field.fieldName));
  const isIdentifier = (field: string) => identifiers.has(baseFieldName(field));
  const values = comparison.changedValues.map((value) =>
    !options.mayViewIdentifiers && isIdentifier(value.field) ? { ...value, oldValue: null, newValue: null, masked: true } : value,
  );
  return {
    importable: true,
    counts,
    problemCount: 0,
    moreProblems: 0,
    problems: [],
    rulesAffected: rulesAffectedByDictionary(skills, storedFields, data.fields),
    changes: { values, moreValues: comparison.moreChangedValues },
  };
}

/** The problems as IMPORT_INVALID lists them, so the preview and the import show the same list. */
function refusedPreview(error: ClinAgentError): ImportPreview {
  const details = error.details as { problemCount: number; moreProblems: number; problems: ImportProblem[] };
  return { importable: false, counts: null, problemCount: details.problemCount, moreProblems: details.moreProblems, problems: details.problems };
}

function rowsPerEvent(records: TrialExport['records'], schedule: ReadonlyArray<{ eventName: string }>): ImportPreviewCounts['rowsPerEvent'] {
  const rows = new Map<string, number>(schedule.map((event) => [event.eventName, 0]));
  for (const record of records) rows.set(record.eventName, (rows.get(record.eventName) ?? 0) + 1);
  return [...rows].filter(([eventName, count]) => count > 0 || eventName !== '').map(([eventName, count]) => ({ eventName, rows: count }));
}
