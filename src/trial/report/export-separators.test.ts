import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { reportToCsv, reportToXlsx } from './export.js';
import type { ReportRow, ViolationsReport } from './violations-report.js';

/**
 * Where the list separator is ";" (German, French, ... Excel), a spreadsheet splits a CSV line at every ";",
 * so a cell ";=HYPERLINK(...)" opens as a cell "=HYPERLINK(...)": a live formula (OWASP "CSV Injection").
 */
const VALUES: Record<string, string | number> = {
  semicolonEquals: ';=HYPERLINK("http://x","click")',
  semicolonPlus: ';+1',
  semicolonMinus: ';-2+3',
  semicolonAt: ';@SUM(A1:A9)',
  midCell: 'visit 2;=1+1',
  semicolonText: ';see note',
  plain: 'S-001 visit late',
  sbp: -5,
};

function reportOf(values: Record<string, string | number>): ViolationsReport {
  const rows: ReportRow[] = Object.entries(values).map(([field, value]) => ({
    recordId: 'S001', eventName: 'v1', site: 'site_01', field, ruleId: `check-${field}`, severity: 'error', status: 'open', message: `check ${field}`, value, createdAt: '2026-01-05T10:00:00.000Z',
  }));
  return { projectId: 'csv-trial', generatedAt: '2026-01-05T10:00:00.000Z', total: rows.length, byField: [], byRule: [], bySite: [], bySeverity: [], byStatus: [], ruleYield: [], rows };
}

describe('report export in locales whose list separator is ";"', () => {
  it('prefixes a CSV cell starting with ";" and a formula character with a quote, leaving other text and numbers alone', () => {
    const csv = reportToCsv(reportOf(VALUES));

    const rows = parse(csv, { bom: true, columns: true }) as Array<Record<string, string>>;
    const valueOf = Object.fromEntries(rows.map((row) => [row.Field, row.Value]));
    expect(valueOf.semicolonEquals).toBe(`';=HYPERLINK("http://x","click")`);
    expect(valueOf.semicolonPlus).toBe(`';+1`);
    expect(valueOf.semicolonMinus).toBe(`';-2+3`);
    expect(valueOf.semicolonAt).toBe(`';@SUM(A1:A9)`);
    expect(valueOf.semicolonText).toBe(';see note');
    expect(valueOf.midCell).toBe('visit 2;=1+1');
    expect(valueOf.plain).toBe('S-001 visit late');
    expect(valueOf.sbp).toBe('-5');
  });

  it('wraps every CSV cell in double quotes, so a ";" inside a cell is never a cell boundary', () => {
    const csv = reportToCsv(reportOf(VALUES));

    expect(csv).toContain(`"';=HYPERLINK(""http://x"",""click"")"`);
    expect(csv).toContain('"visit 2;=1+1"');
    const lines = csv.replace(/^\uFEFF/, '').trim().split(/\r?\n/);
    for (const line of lines) expect(line, line).toMatch(/^"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*$/);
  });

  it('keeps ";" cells in XLSX as text cells with their exact value, never formulas', async () => {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await reportToXlsx(reportOf(VALUES))) as unknown as ArrayBuffer);

    const sheet = workbook.getWorksheet('Violations')!;
    const header = (sheet.getRow(1).values as unknown[]).map(String);
    const cells = new Map<string, ExcelJS.Cell>();
    sheet.eachRow((row, n) => {
      if (n > 1) cells.set(String(row.getCell(header.indexOf('Field')).value), row.getCell(header.indexOf('Value')));
    });
    for (const field of ['semicolonEquals', 'semicolonPlus', 'semicolonMinus', 'semicolonAt', 'midCell']) {
      expect(cells.get(field)!.type, field).toBe(ExcelJS.ValueType.String);
      expect(cells.get(field)!.value, field).toBe(VALUES[field]);
    }
  });
});
