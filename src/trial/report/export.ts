import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import { addRuleYieldSheet } from './rule-yield-sheet.js';
import type { ViolationsReport } from './violations-report.js';

const COLUMNS: Array<[keyof ViolationsReport['rows'][number], string]> = [
  ['recordId', 'Record'], ['eventName', 'Event'], ['site', 'Site'], ['field', 'Field'], ['ruleId', 'Rule'],
  ['severity', 'Severity'], ['status', 'Query status'], ['message', 'Message'], ['value', 'Value'], ['createdAt', 'Raised at'],
];

/**
 * Text a spreadsheet would run as a formula when it opens a CSV file: `=`, `+`, `-`, `@`, and tab or carriage
 * return (which some spreadsheets strip before looking). Record values and messages come from sites and rule
 * authors, so `=HYPERLINK("http://x","click")` in a field must arrive as text, not as a live link. Also `;`
 * followed by one of those: where the list separator is `;` (German, French, ... Excel), the spreadsheet
 * splits the cell there and would run the rest.
 */
const FORMULA_START = /^(?:[=+\-@\t\r]|;[=+\-@])/;

/** OWASP's CSV-injection defence: a leading single quote makes the spreadsheet show the cell as text. Numbers pass as they are. */
function escapeFormula(cell: unknown): unknown {
  return typeof cell === 'string' && FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/**
 * CSV with a UTF-8 BOM so Excel opens Chinese text correctly; every string cell is escaped against formula
 * injection, and every cell is wrapped in double quotes (OWASP's recipe, RFC 4180 2.5-2.7), so a `;` inside
 * a cell is quoted text in a `;` locale too, never a place to split it.
 */
export function reportToCsv(report: ViolationsReport): string {
  return '\uFEFF' + stringify([COLUMNS.map(([, title]) => title), ...report.rows.map((row) => COLUMNS.map(([key]) => escapeFormula(row[key])))], { quoted: true });
}

/**
 * An XLSX workbook: the violations, then one summary sheet with the counts by field, rule, site and severity, then
 * the rule yield.
 * exceljs writes a JavaScript string as a text cell (a shared string), never as a formula, so text such as
 * `=HYPERLINK(...)` is shown, not run, and keeps its exact value; numbers stay numeric cells.
 */
export async function reportToXlsx(report: ViolationsReport): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'ClinAgent';
  workbook.created = new Date(report.generatedAt);
  const sheet = workbook.addWorksheet('Violations');
  sheet.columns = COLUMNS.map(([key, header]) => ({ header, key, width: key === 'message' ? 60 : 16 }));
  sheet.addRows(report.rows);
  sheet.getRow(1).font = { bold: true };
  sheet.views = [{ state: 'frozen', ySplit: 1 }];
  const summary = workbook.addWorksheet('Summary');
  summary.addRow([`Project ${report.projectId}`, `generated ${report.generatedAt}`, `total ${report.total}`]);
  for (const [title, counts] of [['By field', report.byField], ['By rule', report.byRule], ['By site', report.bySite], ['By severity', report.bySeverity], ['By status', report.byStatus]] as const) {
    summary.addRow([]);
    summary.addRow([title, 'Count']).font = { bold: true };
    for (const { key, count } of counts) summary.addRow([key || (title === 'By site' ? '(no site)' : key), count]);
  }
  addRuleYieldSheet(workbook, report.ruleYield);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
