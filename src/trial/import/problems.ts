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

// Enough to fix a systematic mistake from the message alone.
const PROBLEMS_IN_MESSAGE = 20;
// What details.problems lists. A file with 200 000 bad columns has 200 000 problems, and listing them all
// answered 40 MB; the first fifty show the pattern, and the count says how many more there are.
const PROBLEMS_IN_DETAILS = 50;
const VALUE_CHARS_SHOWN = 60;
// A column name is the user's own text; a pasted paragraph in a header cell is named, not echoed whole.
const FIELD_CHARS_SHOWN = 100;
// Problem texts are ours, with cell values quoted and cut; this only bounds one that lists many names.
const PROBLEM_CHARS_SHOWN = 1000;

/** Quotes a cell value for a problem text, shortened so a pasted paragraph does not flood the message. */
export function quote(value: string): string {
  return JSON.stringify(cut(value, VALUE_CHARS_SHOWN));
}

function cut(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars)}…` : text;
}

function formatProblem(problem: ImportProblem): string {
  return `${problem.source} line ${problem.line}, field ${problem.field}: ${problem.problem}`;
}

/** A problem as an error shows it: every text cut to a length a person reads. */
function shortened(problem: ImportProblem): ImportProblem {
  return { ...problem, field: cut(problem.field, FIELD_CHARS_SHOWN), value: cut(problem.value, VALUE_CHARS_SHOWN), problem: cut(problem.problem, PROBLEM_CHARS_SHOWN) };
}

/**
 * The message lists the first twenty problems, details.problems the first fifty, and both say how many
 * more there are, so the answer stays small however broken the file is.
 */
export function listProblems(problems: ReadonlyArray<ImportProblem>, format: (problem: ImportProblem) => string = formatProblem): { lines: string[]; details: { problemCount: number; moreProblems: number; problems: ImportProblem[] } } {
  const listed = problems.slice(0, PROBLEMS_IN_DETAILS).map(shortened);
  const lines = listed.slice(0, PROBLEMS_IN_MESSAGE).map(format);
  const hidden = problems.length - lines.length;
  if (hidden > 0) {
    const where = problems.length > listed.length ? `details.problems lists the first ${listed.length}` : 'all are listed in details.problems';
    lines.push(`... and ${hidden} more (${where})`);
  }
  return { lines, details: { problemCount: problems.length, moreProblems: problems.length - listed.length, problems: listed } };
}

/** The one error an import raises: the problems listed (capped), nothing written. */
export function importInvalid(problems: ReadonlyArray<ImportProblem>): ClinAgentError {
  const sources = [...new Set(problems.map((problem) => problem.source))].join(', ');
  const { lines, details } = listProblems(problems);
  const noun = problems.length === 1 ? 'problem' : 'problems';
  return new ClinAgentError('IMPORT_INVALID', [`${sources}: ${problems.length} ${noun}; nothing was imported. Fix each line below and import the files again.`, ...lines].join('\n'), details);
}

/** Returns the value, or throws IMPORT_INVALID when there is any problem. */
export function valueOrThrow<T>(parsed: Parsed<T>): T {
  if (parsed.problems.length > 0) throw importInvalid(parsed.problems);
  return parsed.value;
}
