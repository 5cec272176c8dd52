import { ClinAgentError } from '../../core/errors.js';
import { escapeUnstorable, unstorableKind } from '../../core/unstorable-text.js';
import { listProblems, type ImportProblem } from './problems.js';

/**
 * PostgreSQL text and jsonb cannot hold U+0000, and jsonb refuses a lone UTF-16 surrogate: a label or value
 * with either reached the database as an error and the import answered 500. Like a wrongly encoded file,
 * such a file cannot be stored as it is, so it is refused with 400 before any line is checked, naming
 * each cell (file, line, column) so the data manager can find it.
 *
 * Lone surrogates arrive only in REDCap API answers (JSON, where "\ud800" is a legal escape): uploaded files
 * are decoded by a fatal TextDecoder, which refuses the file instead, and csv-parse reads CSV text through a
 * Buffer, which turns one into U+FFFD. NUL bytes are valid UTF-8 and arrive either way.
 */
export function assertStorableCells(table: { source: string; headerCells: ReadonlyArray<string>; rows: ReadonlyArray<{ line: number; values: Record<string, string> }> }): void {
  const { source } = table;
  const problems: ImportProblem[] = [];
  table.headerCells.forEach((name, index) => {
    const kind = unstorableKind(name);
    if (kind) problems.push({ source, line: 1, field: `(column ${index + 1})`, value: printable(name), problem: PROBLEM[kind] });
  });
  for (const row of table.rows) {
    for (const [column, value] of Object.entries(row.values)) {
      const kind = unstorableKind(value);
      // A bad header cell is reported once above, not again in every row under it.
      if (kind && !unstorableKind(column)) problems.push({ source, line: row.line, field: column, value: printable(value), problem: PROBLEM[kind] });
    }
  }
  if (problems.length === 0) return;
  const { lines, details } = listProblems(problems, (p) => `${p.source} line ${p.line}, column ${p.field}: ${p.problem}`);
  const cells = problems.length === 1 ? '1 cell holds' : `${problems.length} cells hold`;
  throw new ClinAgentError(
    'VALIDATION_FAILED',
    [`${source}: ${cells} text that cannot be stored; nothing was imported. Fix each cell below (in REDCap or in the file) and import again.`, ...lines].join('\n'),
    { source, ...details },
  );
}

const PROBLEM = {
  nul: 'contains a NUL character (\\u0000), which cannot be stored; delete it (it usually comes from a damaged file or a copy from another program)',
  surrogate: 'contains a lone UTF-16 surrogate (half of a character such as an emoji), which is not valid Unicode text; retype the character or delete it',
} as const;

/** The cell as the error shows it: what cannot be stored is written as its escape. */
function printable(text: string): string {
  // Cut before escaping: the error shows 60 characters of the value anyway.
  return escapeUnstorable(text.slice(0, 200));
}
