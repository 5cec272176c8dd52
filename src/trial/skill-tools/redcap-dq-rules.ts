import { ClinAgentError } from '../../core/errors.js';
import { readCsvTable } from '../import/csv-table.js';

/** One REDCap Data Quality rule: its name (what the site reads) and its logic (true where the discrepancy is). */
export interface RedcapDqRule {
  name: string;
  logic: string;
  /** The severity its findings get; REDCap's export has none, so the importer picks one (the import's default without). */
  severity?: 'error' | 'warning' | 'info';
  /** The CSV line the rule came from. */
  line?: number;
}

/** More rules than any project keeps; a larger file is a mistake (a records export sent as rules). */
export const MAX_REDCAP_DQ_RULES = 2000;

/**
 * Header names as REDCap writes them, compared lower-cased with every run of other characters as `_`: the rules
 * export (Data Quality > "Download rules") writes `rule_name,rule_logic,real_time_execution`; a spreadsheet saved
 * by hand often has `Rule Name`, `Rule Logic (Show discrepancy only if...)`, or just `name,logic`.
 */
const NAME_COLUMNS = ['rule_name', 'name', 'rule_title', 'title'];
const LOGIC_COLUMN = /^(rule_)?logic(_|$)/;

/**
 * The rules of REDCap's Data Quality rules CSV, in file order. A file that is not CSV, or lacks a name or a logic
 * column, is refused with VALIDATION_FAILED saying which columns it has; a row with blank logic is listed in
 * `problems` (by line) and left out.
 */
export function readRedcapDqCsv(text: string): { rules: RedcapDqRule[]; problems: Array<{ rule: string; message: string }> } {
  const { value: table, problems: csvProblems } = readCsvTable(text, 'rules.csv');
  if (csvProblems.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `The rules CSV cannot be read:\n- ${csvProblems.map((p) => `line ${p.line}, ${p.field}: ${p.problem}`).join('\n- ')}`, { field: 'csv', problems: csvProblems });
  }
  const normalized = table.header.map((name) => ({ name, key: name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '') }));
  const nameColumn = normalized.find((column) => NAME_COLUMNS.includes(column.key))?.name;
  const logicColumn = normalized.find((column) => LOGIC_COLUMN.test(column.key))?.name;
  if (!nameColumn || !logicColumn) {
    const missing = [...(nameColumn ? [] : ['rule name column (rule_name)']), ...(logicColumn ? [] : ['logic column (rule_logic)'])];
    throw new ClinAgentError(
      'VALIDATION_FAILED',
      `The rules CSV has no ${missing.join(' and no ')}; its header is ${table.header.map((h) => `"${h}"`).join(', ') || '(empty)'}. Send REDCap's Data Quality rules export (Data Quality > Download rules), whose header is rule_name,rule_logic,real_time_execution.`,
      { field: 'csv', header: table.header },
    );
  }
  if (table.rows.length > MAX_REDCAP_DQ_RULES) {
    throw new ClinAgentError('VALIDATION_FAILED', `The rules CSV has ${table.rows.length} rows; at most ${MAX_REDCAP_DQ_RULES} rules are imported at once. Check that this is the Data Quality rules export, or split it.`, { field: 'csv', rows: table.rows.length });
  }
  const rules: RedcapDqRule[] = [];
  const problems: Array<{ rule: string; message: string }> = [];
  for (const row of table.rows) {
    const name = row.values[nameColumn]!.trim();
    const logic = row.values[logicColumn]!.trim();
    if (!logic) {
      problems.push({ rule: name || `line ${row.line}`, message: `line ${row.line}: the rule has no logic; write the condition that marks a discrepancy, e.g. [age] < 18` });
      continue;
    }
    rules.push({ name: name || `Rule on line ${row.line}`, logic, line: row.line });
  }
  return { rules, problems };
}
