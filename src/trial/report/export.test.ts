import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { buildServer } from '../../http/server.js';
import { buildTestContext } from '../../testing/test-context.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

/**
 * Formula injection (OWASP "CSV Injection"): a value a site typed into the EDC, such as
 * `=HYPERLINK("http://x","click")`, reaches the data manager's spreadsheet through the violations report. It must
 * arrive as text. Downloaded through HTTP by a project member, as the data manager would.
 */
describe('violations report export', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let member: { authorization: string };

  const values: Record<string, unknown> = {
    link: '=HYPERLINK("http://x","click")',
    sum: '-2+3',
    plus: '+1',
    at: '@SUM(A1:A9)',
    tab: '\t=1+1',
    cr: '\r=1+1',
    sbp: -5,
    decimal: 37.5,
    plain: 'S-001 visit late',
  };

  beforeAll(async () => {
    ctx = await buildTestContext();
    app = await buildServer(ctx, { serveConsole: false });
    const dm = await ctx.users.create({ name: 'dm', role: 'coordinator' });
    member = { authorization: `Bearer ${dm.token}` };
    await ctx.users.createProject({ id: 'csv-trial', name: 'CSV trial' });
    await ctx.users.addMember('csv-trial', dm.user.id);
    const [run] = await ctx.db.insert(taskRuns).values({ projectId: 'csv-trial', skillId: 'checks', recordId: 'S001', status: 'COMPLETED', currentNode: 'end' }).returning();
    await ctx.db.insert(pendingActions).values(
      Object.entries(values).map(([field, value]) => ({
        projectId: 'csv-trial',
        taskRunId: run!.id,
        recordId: 'S001',
        nodeId: 'rules',
        ruleId: `check-${field}`,
        field,
        message: field === 'link' ? '=1+1 is not a message' : `check ${field}`,
        severity: 'error' as const,
        value,
      })),
    );
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  it('prefixes CSV cells that start with =, +, -, @, tab or CR with a quote and leaves numbers alone', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/iit/projects/csv-trial/report?format=csv', headers: member });
    expect(response.statusCode, response.body).toBe(200);

    const rows = parse(response.body, { bom: true, columns: true }) as Array<Record<string, string>>;
    const byField = Object.fromEntries(rows.map((row) => [row.Field, row]));
    expect(byField.link!.Value).toBe(`'=HYPERLINK("http://x","click")`);
    expect(byField.link!.Message).toBe(`'=1+1 is not a message`);
    expect(byField.sum!.Value).toBe(`'-2+3`);
    expect(byField.plus!.Value).toBe(`'+1`);
    expect(byField.at!.Value).toBe(`'@SUM(A1:A9)`);
    expect(byField.tab!.Value).toBe(`'\t=1+1`);
    expect(byField.cr!.Value).toBe(`'\r=1+1`);
    expect(byField.sbp!.Value).toBe('-5');
    expect(byField.decimal!.Value).toBe('37.5');
    expect(byField.plain!.Value).toBe('S-001 visit late');
  });

  it('writes XLSX values as text cells, never formulas, and keeps numbers numeric', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/iit/projects/csv-trial/report?format=xlsx', headers: member });
    expect(response.statusCode).toBe(200);

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(response.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet('Violations')!;
    const header = (sheet.getRow(1).values as unknown[]).map(String);
    const fieldColumn = header.indexOf('Field');
    const valueColumn = header.indexOf('Value');
    const cells = new Map<string, ExcelJS.Cell>();
    sheet.eachRow((row, n) => {
      if (n > 1) cells.set(String(row.getCell(fieldColumn).value), row.getCell(valueColumn));
    });

    for (const field of ['link', 'sum', 'plus', 'at', 'tab', 'cr', 'plain']) {
      expect(cells.get(field)!.type, field).toBe(ExcelJS.ValueType.String);
      // XML reads a stored carriage return back as a line feed; the text is otherwise exactly the value.
      expect(cells.get(field)!.value, field).toBe(String(values[field]).replace('\r', '\n'));
    }
    expect(cells.get('sbp')!.type).toBe(ExcelJS.ValueType.Number);
    expect(cells.get('sbp')!.value).toBe(-5);
    expect(cells.get('decimal')!.value).toBe(37.5);
  });
});
