import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import type { ViolationsReport } from './violations-report.js';

const COLUMNS: Array<[keyof ViolationsReport['rows'][number], string]> = [
  ['recordId', 'Record'], ['eventName', 'Event'], ['site', 'Site'], ['field', 'Field'], ['ruleId', 'Rule'],
  ['severity', 'Severity'], ['status', 'Query status'], ['message', 'Message'], ['value', 'Value'], ['createdAt', 'Raised at'],
];

/** CSV with a UTF-8 BOM so Excel opens Chinese text correctly. */
export function reportToCsv(report: ViolationsReport): string {
  return '\uFEFF' + stringify([COLUMNS.map(([, title]) => title), ...report.rows.map((row) => COLUMNS.map(([key]) => row[key]))]);
}

/** An XLSX workbook: the violations, then one summary sheet with the counts by field, rule, site and severity. */
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
    for (const { key, count } of counts) summary.addRow([key, count]);
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
