import ExcelJS from 'exceljs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { MASKED_TEXT } from '../../trial/identifiers.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import type { TrialField } from '../../trial/store/types.js';
import { buildTestContext } from '../../testing/test-context.js';
import { buildServer } from '../server.js';

/**
 * Identifier fields (REDCap "Identifier?" = y) through HTTP: admins and PIs see them; coordinators and
 * viewers see them masked in records, the record page, queries and the report, unless an admin grants them
 * access for the project.
 */
type Server = Awaited<ReturnType<typeof buildServer>>;
type Headers = { authorization: string };

const PROJECT = 'id-trial';
const NAME = '张三';
const PHONE = '138-0013-8000';
const NEW_PHONE = '139-0013-9000';

const field = (fieldName: string, fieldType: TrialField['fieldType'], label: string): TrialField => ({ fieldName, formName: 'enrolment', fieldType, label, choices: [], validationMin: null, validationMax: null, required: false });

describe('identifier fields by role', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let admin: Headers;
  let pi: Headers;
  let crc: Headers;
  let viewer: Headers;
  let granted: Headers;
  let grantedId: string;
  let crcId: string;

  beforeAll(async () => {
    ctx = await buildTestContext();
    app = await buildServer(ctx, { serveConsole: false });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const made = {
      admin: await ctx.users.create({ name: 'id-admin', role: 'admin' }),
      pi: await ctx.users.create({ name: 'id-pi', role: 'pi' }),
      crc: await ctx.users.create({ name: 'id-crc', role: 'coordinator' }),
      viewer: await ctx.users.create({ name: 'id-viewer', role: 'viewer' }),
      granted: await ctx.users.create({ name: 'id-crc-phones', role: 'coordinator' }),
    };
    admin = bearer(made.admin.token);
    pi = bearer(made.pi.token);
    crc = bearer(made.crc.token);
    viewer = bearer(made.viewer.token);
    granted = bearer(made.granted.token);
    grantedId = made.granted.user.id;
    crcId = made.crc.user.id;
    await ctx.users.createProject({ id: PROJECT, name: 'Identifier trial' });
    for (const member of [made.pi, made.crc, made.viewer, made.granted]) await ctx.users.addMember(PROJECT, member.user.id);

    const store = createTrialStore(ctx.db);
    await store.replaceDictionary(PROJECT, [field('record_id', 'text', 'Subject'), field('patient_name', 'text', 'Name'), field('phone', 'text', 'Phone'), field('age', 'integer', 'Age')], 'test');
    // The import of the "Identifier?" column is another change; the flag is set in the table directly here.
    await ctx.db.execute(sql`UPDATE trial_fields SET identifier = true WHERE project_id = ${PROJECT} AND field_name IN ('patient_name', 'phone')`);
    await store.importRecords(PROJECT, [
      { recordId: 'S001', eventName: 'v1_arm_1', site: 'SITE-01', data: { record_id: 'S001', patient_name: NAME, phone: PHONE, age: 17 } },
      { recordId: 'S002', eventName: 'v1_arm_1', site: 'SITE-01', data: { record_id: 'S002', patient_name: '李四', phone: null, age: 45 } },
    ], { actor: 'test' });
    // A corrected phone number: the audit trail now holds the old and the new number.
    await store.importRecords(PROJECT, [{ recordId: 'S001', eventName: 'v1_arm_1', site: 'SITE-01', data: { record_id: 'S001', patient_name: NAME, phone: NEW_PHONE, age: 17 } }], { actor: 'test' });

    const [run] = await ctx.db.insert(taskRuns).values({ projectId: PROJECT, skillId: 'test', recordId: 'S001', status: 'COMPLETED', currentNode: 'end' }).returning();
    const query = (field: string, value: unknown, ruleId: string) => ({ projectId: PROJECT, taskRunId: run!.id, recordId: 'S001', eventName: 'v1_arm_1', site: 'SITE-01', nodeId: 'checks', ruleId, field, message: `check ${ruleId}`, severity: 'warning' as const, value });
    await ctx.db.insert(pendingActions).values([query('v1_arm_1.phone', NEW_PHONE, 'phone-format'), query('patient_name', NAME, 'name-present'), query('v1_arm_1.age', 17, 'adult')]);
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const get = (url: string, headers: Headers) => app.inject({ method: 'GET', url, headers });
  const records = async (headers: Headers) => {
    const response = await get(`/api/iit/projects/${PROJECT}/records`, headers);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().records as Array<{ recordId: string; data: Record<string, unknown>; maskedFields: string[] }>;
  };
  const queries = async (headers: Headers) => {
    const response = await get(`/api/iit/projects/${PROJECT}/queries`, headers);
    expect(response.statusCode, response.body).toBe(200);
    return Object.fromEntries((response.json().queries as Array<{ ruleId: string; value: unknown; masked: boolean }>).map((q) => [q.ruleId, { value: q.value, masked: q.masked }]));
  };
  const csv = async (headers: Headers) => (await get(`/api/iit/projects/${PROJECT}/report?format=csv`, headers)).body;
  const grant = (userId: string, canViewIdentifiers: unknown, headers = admin) => app.inject({ method: 'PATCH', url: `/api/projects/${PROJECT}/members/${userId}`, headers, payload: { canViewIdentifiers } });

  it('masks identifiers in the record list for a coordinator and a viewer, keeping other fields', async () => {
    for (const headers of [crc, viewer]) {
      const [s001, s002] = await records(headers);
      expect(s001).toMatchObject({ recordId: 'S001', data: { record_id: 'S001', patient_name: null, phone: null, age: 17 }, maskedFields: ['patient_name', 'phone'] });
      // A blank identifier is masked too, so the mask does not tell which subjects have a phone number.
      expect(s002).toMatchObject({ data: { patient_name: null, phone: null, age: 45 }, maskedFields: ['patient_name', 'phone'] });
    }
  });

  it('masks identifiers on the record page: events, queries and the audit trail of the record', async () => {
    const page = (await get(`/api/iit/projects/${PROJECT}/records/S001`, crc)).json();

    expect(page.events).toEqual([expect.objectContaining({ data: { record_id: 'S001', patient_name: null, phone: null, age: 17 }, maskedFields: ['patient_name', 'phone'] })]);
    expect(page.queries.map((q: { ruleId: string; value: unknown; masked: boolean }) => [q.ruleId, q.value, q.masked]).sort()).toEqual([['adult', 17, false], ['name-present', null, true], ['phone-format', null, true]]);
    const update = page.audit.find((entry: { action: string }) => entry.action === 'record.update');
    expect(update).toMatchObject({ oldValue: { data: { phone: null } }, newValue: { data: { phone: null } }, maskedFields: ['phone'] });
    expect(JSON.stringify(page)).not.toMatch(new RegExp(`${PHONE}|${NEW_PHONE}|${NAME}`));
  });

  it('masks identifier values in the query list, the query a transition returns and the audit route', async () => {
    expect(await queries(crc)).toEqual({ 'phone-format': { value: null, masked: true }, 'name-present': { value: null, masked: true }, adult: { value: 17, masked: false } });

    const [phoneQuery] = (await get(`/api/iit/projects/${PROJECT}/queries?field=v1_arm_1.phone`, crc)).json().queries;
    const moved = await app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/queries/${phoneQuery.id}/transition`, headers: crc, payload: { to: 'answered', comment: 'number checked with the subject' } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ status: 'answered', value: null, masked: true });

    const audit = (await get(`/api/iit/projects/${PROJECT}/audit?entityType=record`, viewer)).body;
    expect(audit).not.toContain(PHONE);
    expect(audit).not.toContain(NAME);
  });

  it('masks identifier values in the CSV and XLSX report, and in the report the library makes for a coordinator', async () => {
    const text = await csv(crc);
    expect(text).toContain(`,"${MASKED_TEXT}",`);
    expect(text).not.toContain(NEW_PHONE);
    expect(text).not.toContain(NAME);
    expect(text).toContain(',"17",');

    const xlsx = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/report?format=xlsx`, headers: viewer });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    const values: unknown[] = [];
    workbook.getWorksheet('Violations')!.eachRow((row) => values.push(...(row.values as unknown[])));
    expect(values).toContain(MASKED_TEXT);
    expect(values).not.toContain(NEW_PHONE);

    const report = await ctx.trial.reports.violations((await ctx.users.get(crcId))!, PROJECT);
    expect(report.rows.filter((row) => row.masked).map((row) => row.value)).toEqual([MASKED_TEXT, MASKED_TEXT]);
  });

  it('shows identifiers to a PI and an admin everywhere', async () => {
    for (const headers of [pi, admin]) {
      const [s001] = await records(headers);
      expect(s001).toMatchObject({ data: { patient_name: NAME, phone: NEW_PHONE }, maskedFields: [] });
      expect((await queries(headers))['phone-format']).toEqual({ value: NEW_PHONE, masked: false });
      expect(await csv(headers)).toContain(NEW_PHONE);
      const page = (await get(`/api/iit/projects/${PROJECT}/records/S001`, headers)).json();
      expect(page.audit.find((entry: { action: string }) => entry.action === 'record.update')).toMatchObject({ oldValue: { data: { phone: PHONE } }, newValue: { data: { phone: NEW_PHONE } } });
    }
  });

  it('shows identifiers to a coordinator an admin granted them, records the grant in the audit trail, and masks again when taken back', async () => {
    expect((await records(granted))[0]!.data.phone).toBeNull();

    const response = await grant(grantedId, true);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ projectId: PROJECT, userId: grantedId, canViewIdentifiers: true, role: 'coordinator', projectRole: null });
    expect((await records(granted))[0]).toMatchObject({ data: { patient_name: NAME, phone: NEW_PHONE }, maskedFields: [] });
    expect((await queries(granted))['name-present']).toEqual({ value: NAME, masked: false });
    expect(await csv(granted)).toContain(NEW_PHONE);
    // The grant is for this user only: the other coordinator still sees masks.
    expect((await records(crc))[0]!.data.phone).toBeNull();

    expect((await grant(grantedId, true)).statusCode).toBe(200); // granting again changes and records nothing
    expect((await grant(grantedId, false)).json()).toMatchObject({ canViewIdentifiers: false });
    expect((await records(granted))[0]!.data.phone).toBeNull();

    const trail = (await get(`/api/iit/projects/${PROJECT}/audit?entityType=member&entityId=${grantedId}`, admin)).json().entries as Array<{ action: string; actor: string; oldValue: unknown; newValue: unknown }>;
    expect(trail.filter((entry) => entry.action.startsWith('member.identifiers')).map((entry) => [entry.action, entry.actor, entry.oldValue, entry.newValue])).toEqual([
      ['member.identifiers_granted', 'id-admin', { canViewIdentifiers: false }, { canViewIdentifiers: true }],
      ['member.identifiers_revoked', 'id-admin', { canViewIdentifiers: true }, { canViewIdentifiers: false }],
    ]);
  });

  it('lets only admins grant, and answers bad grants with a clear 4xx', async () => {
    const byPi = await grant(crcId, true, pi);
    expect(byPi.statusCode).toBe(403);
    expect(byPi.json().code).toBe('FORBIDDEN');

    const notMember = await grant('00000000-0000-4000-8000-000000000000', true);
    expect(notMember.statusCode).toBe(404);
    expect(notMember.json().message).toContain('is not a member of project "id-trial"');
    expect((await grant('not-a-uuid', true)).statusCode).toBe(404);
    expect((await app.inject({ method: 'PATCH', url: `/api/projects/no-such-project/members/${crcId}`, headers: admin, payload: { canViewIdentifiers: true } })).statusCode).toBe(404);

    const badBody = await grant(crcId, 'yes');
    expect(badBody.statusCode).toBe(400);
    expect(badBody.json().message).toContain('canViewIdentifiers');
    const extra = await app.inject({ method: 'PATCH', url: `/api/projects/${PROJECT}/members/${crcId}`, headers: admin, payload: { canViewIdentifiers: true, role: 'admin' } });
    expect(extra.statusCode).toBe(400);
    expect((await records(crc))[0]!.data.phone).toBeNull();
  });
});
