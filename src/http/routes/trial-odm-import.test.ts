import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../../testing/test-context.js';
import { multipartBody } from '../../testing/multipart.js';
import { buildServer } from '../server.js';

const fixture = (name: string) => readFileSync(path.join(process.cwd(), 'test-data', 'trial', 'odm', name));
const odmUpload = (content: Buffer | string, extra: Record<string, { name: string; content: Buffer }> = {}) =>
  multipartBody({ files: { odm: { name: 'project.odm.xml', content, type: 'application/xml' }, ...extra } });

describe('POST /api/iit/projects/:projectId/imports with an odm part', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let member: { authorization: string };

  beforeAll(async () => {
    ctx = await buildTestContext();
    app = await buildServer(ctx, { serveConsole: false });
    const coordinator = await ctx.users.create({ name: 'crc', role: 'coordinator' });
    await ctx.users.createProject({ id: 'odm-trial', name: 'ODM trial' });
    await ctx.users.addMember('odm-trial', coordinator.user.id);
    member = { authorization: `Bearer ${coordinator.token}` };
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const post = (upload: ReturnType<typeof multipartBody>) => app.inject({ method: 'POST', url: '/api/iit/projects/odm-trial/imports', headers: { ...member, ...upload.headers }, payload: upload.payload });

  it('reports a bad value by ODM element and writes nothing, then imports the corrected file', async () => {
    const odm = fixture('project.odm.xml').toString('utf8');
    const refused = await post(odmUpload(odm.replace('<ItemData ItemOID="sbp" Value="132"/>', '<ItemData ItemOID="sbp" Value="13x"/>')));
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json().code).toBe('IMPORT_INVALID');
    expect(refused.json().message).toContain('ItemData[@ItemOID="sbp"] in SubjectData[@SubjectKey="101"]/StudyEventData[@StudyEventOID="Event.baseline_arm_1"], field sbp: "13x" is not an integer');
    expect(refused.json().details.problems[0]).toMatchObject({ source: 'project.odm.xml', field: 'sbp', value: '13x' });
    expect((await app.inject({ method: 'GET', url: '/api/iit/projects/odm-trial/records/101', headers: member })).statusCode).toBe(404);

    const response = await post(odmUpload(fixture('project.odm.xml')));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ fields: 11, events: 6, arms: 2, records: { created: 13 } });
    const record = await app.inject({ method: 'GET', url: '/api/iit/projects/odm-trial/records/101', headers: member });
    expect(record.statusCode, record.body).toBe(200);
    expect(JSON.stringify(record.json())).toContain('"sbp":132');
  });

  it('refuses an ODM file sent together with CSV files, and a DOCTYPE', async () => {
    const both = await post(odmUpload(fixture('project.odm.xml'), { records: { name: 'records.csv', content: fixture('records.csv') } }));
    expect(both.statusCode).toBe(400);
    expect(both.json().message).toMatch(/^Send either an ODM file as "odm" or the REDCap CSV files, not both \(this request also has "records"\)/);

    const doctype = await post(odmUpload('<?xml version="1.0"?>\n<!DOCTYPE ODM [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<ODM>&x;</ODM>'));
    expect(doctype.statusCode).toBe(400);
    expect(doctype.json().message).toMatch(/^project\.odm\.xml has a DOCTYPE declaration \(line 2\)/);
  });
});
