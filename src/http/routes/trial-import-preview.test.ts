import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/paths.js';
import { buildTestContext } from '../../testing/test-context.js';
import { multipartBody, type MultipartFile } from '../../testing/multipart.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

const fixture = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', name));
const csvParts = (records: Buffer | string = fixture('records.csv')): Record<string, MultipartFile> => ({
  dictionary: { name: 'dictionary.csv', content: fixture('dictionary.csv') },
  events: { name: 'events.csv', content: fixture('events.csv') },
  arms: { name: 'arms.csv', content: fixture('arms.csv') },
  records: { name: 'records.csv', content: records },
});

describe.each(testEngines())('POST /api/iit/projects/:projectId/imports?preview=true on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  const auth: Record<'coordinator' | 'viewer', { authorization: string }> = {} as never;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: 'preview-trial', name: 'Preview trial' });
    for (const role of ['coordinator', 'viewer'] as const) {
      const { user, token } = await ctx.users.create({ name: `${role}-preview`, role });
      await ctx.users.addMember('preview-trial', user.id);
      auth[role] = { authorization: `Bearer ${token}` };
    }
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const post = (query: string, files: Record<string, MultipartFile>, who: { authorization: string } = auth.coordinator) => {
    const upload = multipartBody({ files });
    return app.inject({ method: 'POST', url: `/api/iit/projects/preview-trial/imports${query}`, headers: { ...who, ...upload.headers }, payload: upload.payload });
  };
  const auditCount = async () => (await app.inject({ method: 'GET', url: '/api/iit/projects/preview-trial/audit', headers: auth.coordinator })).json().entries.length;
  const projectRows = async () => (await app.inject({ method: 'GET', url: '/api/iit/projects', headers: auth.coordinator })).json().projects[0].rows;

  it('answers what a CSV import would do and writes nothing; the import then reports the same', async () => {
    const audit = await auditCount();
    const preview = await post('?preview=true', csvParts());
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ importable: true, problemCount: 0, problems: [], counts: { fields: 11, forms: 3, events: 6, arms: 2, subjects: 5, rows: 13, records: { created: 13, updated: 0, unchanged: 0 }, isDictionaryChanged: true } });
    expect(await projectRows()).toBe(0);
    expect(await auditCount()).toBe(audit);

    const imported = await post('', csvParts());
    expect(imported.statusCode, imported.body).toBe(201);
    const { forms, subjects, rows, rowsPerEvent, ...wouldImport } = preview.json().counts;
    expect(imported.json()).toEqual(wouldImport);
    expect(rowsPerEvent.reduce((sum: number, event: { rows: number }) => sum + event.rows, 0)).toBe(rows);
  });

  it('lists every problem of a bad export by line and field as the import would, writing nothing', async () => {
    const records = fixture('records.csv').toString('utf8').replace(',72.5,132,', ',72.5,13x,');
    const audit = await auditCount();
    const preview = await post('?preview=true', csvParts(records));
    expect(preview.statusCode, preview.body).toBe(200);
    const refused = await post('', csvParts(records));
    expect(refused.statusCode).toBe(422);
    expect(preview.json()).toEqual({ importable: false, counts: null, ...refused.json().details });
    expect(preview.json().problems).toContainEqual(expect.objectContaining({ source: 'records.csv', line: 3, field: 'sbp', value: '13x' }));
    expect(await auditCount()).toBe(audit);
  });

  it('previews an ODM file against the stored trial, its problems by element', async () => {
    const same = await post('?preview=true', { odm: { name: 'project.odm.xml', content: fixture('project.odm.xml'), type: 'application/xml' } });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json().counts).toMatchObject({ records: { created: 0, updated: 0, unchanged: 13 }, isDictionaryChanged: false, isEventsChanged: false, isArmsChanged: false });

    const bad = fixture('project.odm.xml').toString('utf8').replace('<ItemData ItemOID="sbp" Value="132"/>', '<ItemData ItemOID="sbp" Value="13x"/>');
    const refused = await post('?preview=true', { odm: { name: 'project.odm.xml', content: bad, type: 'application/xml' } });
    expect(refused.statusCode, refused.body).toBe(200);
    expect(refused.json()).toMatchObject({ importable: false, counts: null, problemCount: 1 });
    expect(refused.json().problems[0]).toMatchObject({ field: 'sbp', value: '13x', element: expect.stringContaining('ItemData[@ItemOID="sbp"]') });
  });

  it('lists the values a correction would change, record by record, under the uploaded file names, identifiers masked', async () => {
    // The CSV export is stored by the first test; this one corrects two values and a birth date.
    const corrected = fixture('records.csv').toString('utf8')
      .replace('101,week4_arm_1,site_a,,,,,2024-04-05,71.9,128,', '101,week4_arm_1,site_a,,,,,2024-04-05,71.4,126,')
      .replace('103,screening_arm_1,site_b,2024-03-10,1970-02-01,', '103,screening_arm_1,site_b,2024-03-10,1970-02-11,');
    const parts = { ...csvParts(corrected), records: { name: 'HTN_DATA_2024-06-03_0915.csv', content: corrected } };

    const preview = await post('?preview=true', parts);

    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json().counts.records).toEqual({ created: 0, updated: 2, unchanged: 11 });
    expect(preview.json().changes).toEqual({
      values: [
        { recordId: '101', eventName: 'week4_arm_1', field: 'weight', oldValue: 71.9, newValue: 71.4 },
        { recordId: '101', eventName: 'week4_arm_1', field: 'sbp', oldValue: 128, newValue: 126 },
        // dob is an identifier, and a coordinator without identifier access sees that it changes, not its values.
        { recordId: '103', eventName: 'screening_arm_1', field: 'dob', oldValue: null, newValue: null, masked: true },
      ],
      moreValues: 0,
    });
    expect(preview.body).not.toContain('1970-02');
    // Warnings and problems name the file as it was uploaded, not "records.csv".
    expect(preview.json().counts.warnings[0].message).toMatch(/^HTN_DATA_2024-06-03_0915\.csv line 6, field weight: 250 is above/);
    const broken = await post('?preview=true', { ...parts, records: { name: 'HTN_DATA_2024-06-03_0915.csv', content: corrected.replace(',71.4,126,', ',71.4,12x,') } });
    expect(broken.json().problems[0]).toMatchObject({ source: 'HTN_DATA_2024-06-03_0915.csv', field: 'sbp', value: '12x' });
  });

  it('is for those who may import: a viewer is refused as the import refuses them', async () => {
    const preview = await post('?preview=true', csvParts(), auth.viewer);
    expect(preview.statusCode).toBe(403);
    expect(preview.json().code).toBe('FORBIDDEN');
  });
});
