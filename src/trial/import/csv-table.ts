import { parse } from 'csv-parse/sync';
import { quote, type ImportProblem, type Parsed } from './problems.js';
import { assertStorableCells } from './unstorable-cells.js';
import { importTooLarge, IMPORT_LIMITS, type ImportLimit } from './import-limits.js';

/** Bounds on what a file may expand into, checked while it is read (header row included in neither). */
interface TableLimits {
  rows: ImportLimit;
  cells?: ImportLimit;
}

/** The limits of a records file: rows, and rows x columns. */
export const RECORD_TABLE_LIMITS: TableLimits = { rows: 'recordRows', cells: 'recordCells' };
/** The limit of a data dictionary: one row per field. */
export const DICTIONARY_TABLE_LIMITS: TableLimits = { rows: 'dictionaryFields' };

/** Rows of a file or API answer, keyed by column, each with its spreadsheet line (header = line 1). */
export interface Table {
  source: string;
  header: string[];
  rows: Array<{ line: number; values: Record<string, string> }>;
}

/**
 * Reads CSV text as REDCap and Excel write it: an optional UTF-8 BOM (Excel adds one to keep Chinese
 * labels readable), CRLF or LF, quoted cells with commas, quotes and line breaks. Blank rows are skipped
 * but still counted, so line numbers match what a spreadsheet shows. A cell that cannot be stored (a NUL
 * character, a lone surrogate) refuses the whole file with 400 VALIDATION_FAILED naming each such cell.
 */
export function readCsvTable(text: string, source: string, limits?: TableLimits): Parsed<Table> {
  const problems: ImportProblem[] = [];
  let cells: string[][];
  // Counted as the parser goes, so a file over a limit is refused before it is all in memory.
  let over: ReturnType<typeof importTooLarge> | undefined;
  let rowCount = -1;
  let cellCount = 0;
  const onRecord = (record: string[]) => {
    rowCount += 1;
    if (rowCount === 0) return record;
    cellCount += record.length;
    if (limits && rowCount > IMPORT_LIMITS[limits.rows]) over = importTooLarge(limits.rows, source);
    else if (limits?.cells && cellCount > IMPORT_LIMITS[limits.cells]) over = importTooLarge(limits.cells, source);
    if (over) throw over;
    return record;
  };
  try {
    cells = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: false, on_record: limits ? onRecord : undefined }) as string[][];
  } catch (error) {
    if (over) throw over;
    const info = error as { records?: number; message?: string };
    // Rows parsed before the bad one, header included, so the bad row's spreadsheet line is one more.
    const line = (info.records ?? 0) + 1;
    problems.push({ source, line, field: '(file)', value: '', problem: `the file is not valid CSV (${info.message ?? 'parse error'}); check for an unclosed or stray quote (") on or after this line` });
    return { value: { source, header: [], rows: [] }, problems };
  }
  const [headerCells, ...body] = cells;
  if (!headerCells || isBlank(headerCells)) {
    problems.push({ source, line: 1, field: '(file)', value: '', problem: 'the file is empty; the first line must be the header row' });
    return { value: { source, header: [], rows: [] }, problems };
  }
  const header = headerCells.map((name) => name.trim());
  const seen = new Set<string>();
  header.forEach((name, index) => {
    if (!name) problems.push({ source, line: 1, field: `(column ${index + 1})`, value: '', problem: 'the header cell is empty; name the column or delete it' });
    else if (seen.has(name)) problems.push({ source, line: 1, field: name, value: name, problem: `column ${quote(name)} appears twice in the header; keep one` });
    seen.add(name);
  });
  const rows: Table['rows'] = [];
  body.forEach((row, index) => {
    const line = index + 2;
    if (isBlank(row)) return;
    if (row.length !== header.length) {
      problems.push({ source, line, field: '(row)', value: '', problem: `the row has ${row.length} cells but the header has ${header.length}; check for a missing or extra comma` });
      return;
    }
    rows.push({ line, values: Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])) });
  });
  assertStorableCells({ source, headerCells, rows });
  return { value: { source, header, rows }, problems };
}

/**
 * Builds the same table from REDCap API JSON (an array of flat objects). Rows are numbered as REDCap's CSV
 * export of the same data would number them, so a problem points at the same line in either source. JSON
 * may carry "\u0000" and lone surrogates; a cell with either is refused as in a CSV file.
 */
export function jsonTable(items: ReadonlyArray<Record<string, unknown>>, source: string): Table {
  const header: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    for (const key of Object.keys(item)) {
      if (seen.has(key)) continue;
      seen.add(key);
      header.push(key);
    }
  }
  const table: Table = {
    source,
    header,
    rows: items.map((item, index) => ({
      line: index + 2,
      values: Object.fromEntries(header.map((name) => [name, item[name] === undefined || item[name] === null ? '' : String(item[name])])),
    })),
  };
  assertStorableCells({ source, headerCells: header, rows: table.rows });
  return table;
}

function isBlank(row: ReadonlyArray<string>): boolean {
  return row.every((cell) => cell.trim() === '');
}
