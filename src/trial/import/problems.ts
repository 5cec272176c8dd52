import { ClinAgentError } from '../../core/errors.js';

/**
 * One thing wrong with an imported file. `line` is the row as a spreadsheet shows it (header = line 1, a
 * cell with a line break still one row), so a data manager can go straight to the cell. `field` is the
 * column, or "(row)" / "(file)" when the whole row or file is wrong.
 */
export interface ImportProblem {
  /** The file or source, e.g. "records.csv" or "REDCap API records". */
  source: string;
  line: number;
  field: string;
  value: string;
  problem: string;
}

export interface Parsed<T> {
  value: T;
  problems: ImportProblem[];
}

/**
 * A value outside the dictionary's validation min/max. REDCap lets staff save such a value after a warning,
 * so the import keeps it (QC raises the query) and tells the data manager where it is.
 */
export interface ImportWarning {
  /** Spreadsheet line of the row in `message`'s file (header = line 1). */
  line: number;
  recordId: string;
  /** The row's event (redcap_event_name); '' in a classic project. */
  event: string;
  field: string;
  /** The value as imported: a number for integer and number fields, text for dates. */
  value: string | number;
  min: string | null;
  max: string | null;
  /** e.g. "records.csv line 14, field age: 17 is below the validation minimum 18; imported, QC will report it". */
  message: string;
}

// Enough to fix a systematic mistake from the message alone; the rest is in details.problems.
const PROBLEMS_IN_MESSAGE = 20;
const VALUE_CHARS_SHOWN = 60;

/** Quotes a cell value for a problem text, shortened so a pasted paragraph does not flood the message. */
export function quote(value: string): string {
  const shown = value.length > VALUE_CHARS_SHOWN ? `${value.slice(0, VALUE_CHARS_SHOWN)}…` : value;
  return JSON.stringify(shown);
}

export function formatProblem(problem: ImportProblem): string {
  return `${problem.source} line ${problem.line}, field ${problem.field}: ${problem.problem}`;
}

/** The one error an import raises: every problem in details, the first twenty in the message. */
export function importInvalid(problems: ReadonlyArray<ImportProblem>): ClinAgentError {
  const sources = [...new Set(problems.map((problem) => problem.source))].join(', ');
  const shown = problems.slice(0, PROBLEMS_IN_MESSAGE).map(formatProblem);
  const more = problems.length > shown.length ? [`... and ${problems.length - shown.length} more (all are listed in details.problems)`] : [];
  const noun = problems.length === 1 ? 'problem' : 'problems';
  return new ClinAgentError(
    'IMPORT_INVALID',
    [`${sources}: ${problems.length} ${noun}; nothing was imported. Fix each line below and import the files again.`, ...shown, ...more].join('\n'),
    { problemCount: problems.length, problems: [...problems] },
  );
}

/** Returns the value, or throws IMPORT_INVALID when there is any problem. */
export function valueOrThrow<T>(parsed: Parsed<T>): T {
  if (parsed.problems.length > 0) throw importInvalid(parsed.problems);
  return parsed.value;
}
