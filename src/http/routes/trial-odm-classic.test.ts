import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/paths.js';
import { buildTestContext } from '../../testing/test-context.js';
import { multipartBody, type MultipartFile } from '../../testing/multipart.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

const fixture = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'odm', name), 'utf8');
// REDCap 14's ODM export of a classic (non-longitudinal) project: SubjectData > FormData, no StudyEventData,
// and a file upload field whose content REDCap writes as base64 in ItemDataBase64Binary.
const classicOdm = fixture('classic.odm.xml');
const odmPart = (content: string, name = 'ConsentPilot_ODM.xml'): Record<string, MultipartFile> => ({ odm: { name, content, type: 'application/xml' } });

describe.each(testEngines())('REDCap and OpenClinica ODM exports as they are written, over HTTP on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let coordinator: { authorization: string };

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    const { user, token } = await ctx.users.create({ name: 'crc-classic', role: 'coordinator' });
    for (const id of ['classic-odm', 'classic-csv', 'empty-odm', 'oc-odm']) {
      await ctx.users.createProject({ id, name: id });
      await ctx.users.addMember(id, user.id);
    }
    coordinator = { authorization: `Bearer ${token}` };
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const post = (projectId: string, query: string, files: Record<string, MultipartFile>) => {
    const upload = multipartBody({ files });
    return app.inject({ method: 'POST', url: `/api/iit/projects/${projectId}/imports${query}`, headers: { ...coordinator, ...upload.headers }, payload: upload.payload });
  };
  const records = async (projectId: string) =>
    ((await app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/records`, headers: coordinator })).json().records as Array<{ recordId: string; eventName: string; data: Record<string, unknown> }>)
      .map(({ recordId, eventName, data }) => ({ recordId, eventName, data }))
      .sort((a, b) => a.recordId.localeCompare(b.recordId));
  const crfField = async (projectId: string, recordId: string, name: string) => {
    const view = (await app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/records/${recordId}`, headers: coordinator })).json();
    return (view.crf.forms as Array<{ fields: Array<{ name: string; type: string }> }>).flatMap((form) => form.fields).find((field) => field.name === name);
  };

  it("previews and imports every subject of a classic project's ODM export, as its CSV export imports them", async () => {
    const preview = await post('classic-odm', '?preview=true', odmPart(classicOdm));
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ importable: true, counts: { subjects: 3, rows: 3, records: { created: 3 }, rowsPerEvent: [{ eventName: '', rows: 3 }] } });
    expect(preview.json().counts.warnings).toEqual([expect.objectContaining({ recordId: '2', field: 'age', value: 17 })]);

    const imported = await post('classic-odm', '', odmPart(classicOdm));
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.json()).toMatchObject({ fields: 5, records: { created: 3, updated: 0, unchanged: 0 } });

    const fromCsv = await post('classic-csv', '', { dictionary: { name: 'ConsentPilot_DataDictionary.csv', content: fixture('classic-dictionary.csv') }, records: { name: 'ConsentPilot_DATA.csv', content: fixture('classic-records.csv') } });
    expect(fromCsv.statusCode, fromCsv.body).toBe(201);
    expect(await records('classic-odm')).toEqual(await records('classic-csv'));
    expect((await records('classic-odm'))[0]).toEqual({ recordId: '1', eventName: '', data: { consent_date: '2024-05-02', consent_form: 'consent_1_signed.jpg', age: 54, enrolment_complete: '2', sbp: 138, vitals_complete: '2' } });
  });

  it('imports a file upload field as its file name, typed file, never its base64 content', async () => {
    const stored = await records('classic-odm');
    expect(stored.map((record) => record.data.consent_form)).toEqual(['consent_1_signed.jpg', null, 'consent_3.pdf']);
    expect(JSON.stringify(stored)).not.toContain('JVBERi0');
    expect(await crfField('classic-odm', '3', 'consent_form')).toMatchObject({ type: 'file' });
    expect(await crfField('classic-csv', '3', 'consent_form')).toMatchObject({ type: 'file' });
    const audit = (await app.inject({ method: 'GET', url: '/api/iit/projects/classic-odm/audit', headers: coordinator })).body;
    expect(audit).not.toContain('JVBERi0');
  });

  it('names a file whose subjects would give no record as a problem, in the preview and the import alike', async () => {
    const withoutForms = classicOdm.replace(/<FormData[\s\S]*?<\/FormData>/g, '');
    expect(withoutForms).toContain('<SubjectData SubjectKey="1"');

    const preview = await post('empty-odm', '?preview=true', odmPart(withoutForms, 'no-forms.xml'));
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ importable: false, counts: null, problemCount: 1, problems: [{ source: 'no-forms.xml', element: 'SubjectData[@SubjectKey="1"]' }] });
    expect(preview.json().problems[0].problem).toContain('3 SubjectData elements but none holds a FormData');

    const metadataOnly = classicOdm.replace(/<ClinicalData[\s\S]*<\/ClinicalData>/, '');
    const refused = await post('empty-odm', '', odmPart(metadataOnly, 'metadata-only.xml'));
    expect(refused.statusCode).toBe(422);
    expect(refused.json().message).toContain('the file has no SubjectData, so no record would be imported');
    expect(await records('empty-odm')).toEqual([]);
  });

  it("takes an OpenClinica subject's SubjectKey as its record id, not the StudySubjectID label", async () => {
    const openClinica = fixture('openclinica.odm.xml').replace('<SubjectData SubjectKey="SS_001">', '<SubjectData SubjectKey="SS_KE001" OpenClinica:StudySubjectID="KE-001" OpenClinica:UniqueIdentifier="PID-KE-001" OpenClinica:Status="available" OpenClinica:DateOfBirth="1971-03-02" OpenClinica:Sex="f">');
    expect(openClinica).toContain('OpenClinica:StudySubjectID="KE-001"');

    const imported = await post('oc-odm', '', odmPart(openClinica, 'S_DIAB01_ODM.xml'));
    expect(imported.statusCode, imported.body).toBe(201);
    expect((await records('oc-odm')).map((record) => record.recordId)).toEqual(['SS_KE001']);
  });
});
