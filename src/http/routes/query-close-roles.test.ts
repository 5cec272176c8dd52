import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataQuery, DataQueryPage } from '../../contract/index.js';
import { startQcServer, type QcServer } from '../../testing/qc-server.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import type { TrialField, TrialRecord } from '../../trial/store/types.js';

/**
 * Who may close a query (issue 32): a coordinator could answer AND close queries. In an EDC the site answers and
 * data management closes. Here a data manager, added to the trial with the data_manager role on its Members tab,
 * runs QC; the coordinator (the site) answers a query and is refused closing it, one by one, in bulk or by
 * reopening, with a refusal naming who may; the data manager closes and reopens. The data manager sees identifier
 * fields masked, like a coordinator, unless an admin grants them.
 */
const PROJECT = 'close-roles';
const PHONE = '1380013800';

const SKILL = `
id: close-roles-checks
name: Close roles checks
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - { id: phone-format, field: phone, logic: { matches: [{ var: phone }, "^1[3-9][0-9]{9}$"] }, message: "Phone must be 11 digits" }
      - { id: adult, field: age, logic: { ">=": [{ var: age }, 18] }, message: "Subject must be an adult" }
    on_pass: end_ok
    on_fail: end_found
`;

const field = (fieldName: string, fieldType: TrialField['fieldType']): TrialField => ({ fieldName, formName: 'enrolment', fieldType, label: fieldName, choices: [], validationMin: null, validationMax: null, required: false });
const row = (recordId: string, age: number): TrialRecord => ({ recordId, eventName: '', site: 'SITE-01', data: { record_id: recordId, phone: PHONE, age } });

describe.each(testEngines())('who may close a query on %s', (engine) => {
  let server: QcServer | undefined;
  let ctx: QcServer['ctx'];
  let app: QcServer['app'];
  const headers: Record<'admin' | 'dm' | 'crc' | 'pi', { authorization: string }> = {} as never;

  beforeAll(async () => {
    server = await startQcServer({ engine, name: 'close-roles', skills: { 'close-roles-checks': SKILL } });
    ({ ctx, app } = server);
    const admin = await ctx.users.create({ name: 'cr-admin', role: 'admin' });
    headers.admin = { authorization: `Bearer ${admin.token}` };
    await ctx.users.createProject({ id: PROJECT, name: 'Close roles' });
    // As an admin sets them up on the trial's Members tab: the data manager is a coordinator elsewhere.
    for (const [who, platformRole, trialRole] of [['dm', 'coordinator', 'data_manager'], ['crc', 'coordinator', undefined], ['pi', 'pi', undefined]] as const) {
      const made = await ctx.users.create({ name: `cr-${who}`, role: platformRole });
      headers[who] = { authorization: `Bearer ${made.token}` };
      const added = await app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/members`, headers: headers.admin, payload: { userId: made.user.id, ...(trialRole ? { role: trialRole } : {}) } });
      expect(added.statusCode, added.body).toBe(201);
      expect(added.json()).toMatchObject({ role: trialRole ?? platformRole, seesIdentifiers: who === 'pi' });
    }
    const store = createTrialStore(ctx.db);
    await store.replaceDictionary(PROJECT, [field('record_id', 'text'), field('phone', 'text'), field('age', 'integer')], 'test');
    await ctx.db.execute(sql`UPDATE trial_fields SET identifier = true WHERE project_id = ${PROJECT} AND field_name = 'phone'`);
    await store.importRecords(PROJECT, ['S001', 'S002', 'S003', 'S004'].map((id, i) => row(id, 10 + i)), { actor: 'site' });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  const page = async (who: keyof typeof headers, query = '') => {
    const response = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/queries?sort=recordId&order=asc${query}`, headers: headers[who] });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<DataQueryPage>().queries;
  };
  const move = (who: keyof typeof headers, id: string, to: string, comment = '') =>
    app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/queries/${id}/transition`, headers: headers[who], payload: { to, comment } });
  const bulkClose = (who: keyof typeof headers, payload: object) => app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/queries/bulk-close`, headers: headers[who], payload });

  it('lets the data manager run QC and see what it found, identifiers masked as for a coordinator', async () => {
    const started = await app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/qc-runs`, headers: headers.dm, payload: { skillId: 'close-roles-checks' } });
    expect(started.statusCode, started.body).toBe(202);
    const runId = started.json<{ id: string }>().id;
    await waitFor(async () => (await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${runId}`, headers: headers.dm })).json<{ status: string }>().status === 'completed', 'the QC run to complete');
    const queries = await page('dm', '&field=age');
    expect(queries.map((q) => [q.recordId, q.status])).toEqual([['S001', 'open'], ['S002', 'open'], ['S003', 'open'], ['S004', 'open']]);
    const phone = await page('dm', '&field=phone');
    expect(phone.length).toBeGreaterThan(0);
    expect(phone.every((q) => q.value === null && q.masked)).toBe(true);
    const record = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/records/S001`, headers: headers.dm });
    expect(record.statusCode).toBe(200);
    expect(record.body).not.toContain(PHONE);
  });

  it('offers the site only answering, and data management closing and reopening', async () => {
    const [forSite] = await page('crc', '&field=age&recordId=S001');
    expect(forSite!.allowedTransitions).toEqual(['answered']);
    const [forDm] = await page('dm', '&field=age&recordId=S001');
    expect(forDm!.allowedTransitions).toEqual(['answered', 'closed']);
    const [forPi] = await page('pi', '&field=age&recordId=S001');
    expect(forPi!.allowedTransitions).toEqual(['answered', 'closed']);
  });

  it('refuses the coordinator closing a query, one by one or in bulk, naming who may close; the site answers', async () => {
    const [query] = await page('crc', '&field=age&recordId=S001');
    const closed = await move('crc', query!.id, 'closed', 'looks fine');
    expect(closed.statusCode, closed.body).toBe(403);
    expect(closed.json()).toMatchObject({ code: 'FORBIDDEN', details: { role: 'coordinator', needs: ['admin', 'pi', 'data_manager'] } });
    expect(closed.json().message).toContain('Only a data manager, the PI or an admin may close a query');
    expect(closed.json().message).toContain('The site answers queries');

    const answered = await move('crc', query!.id, 'answered', 'Age confirmed on the source document');
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json<DataQuery>()).toMatchObject({ status: 'answered', allowedTransitions: [] });

    for (const payload of [{ queryIds: [query!.id], reason: 'resolved' }, { filter: { field: 'age' }, reason: 'resolved' }]) {
      const bulk = await bulkClose('crc', payload);
      expect(bulk.statusCode, bulk.body).toBe(403);
      expect(bulk.json().message).toContain('Only a data manager, the PI or an admin may close queries');
    }
    const reopened = await move('crc', query!.id, 'reopened', 'not resolved');
    expect(reopened.statusCode).toBe(403);
    expect(reopened.json().message).toContain('may reopen a query');
    expect((await page('dm', '&field=age&status=closed'))).toEqual([]);
  });

  it('lets the data manager close, reopen and close in bulk, each audited as theirs', async () => {
    const [query] = await page('dm', '&field=age&recordId=S001');
    expect(query!.status).toBe('answered');
    const reopened = await move('dm', query!.id, 'reopened', 'Source says 11, not 10: please correct');
    expect(reopened.statusCode, reopened.body).toBe(200);
    expect((await move('crc', query!.id, 'answered', 'Corrected to 11')).statusCode).toBe(200);
    const closed = await move('dm', query!.id, 'closed', 'Verified against source');
    expect(closed.statusCode, closed.body).toBe(200);
    expect(closed.json<DataQuery>()).toMatchObject({ status: 'closed', allowedTransitions: ['reopened'] });

    const bulk = await bulkClose('dm', { filter: { field: 'age' }, reason: 'Minors enrolled with consent of a guardian' });
    expect(bulk.statusCode, bulk.body).toBe(200);
    expect(bulk.json()).toMatchObject({ closed: 3 });
    const trail = (await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/audit?entityType=query`, headers: headers.admin })).json<{ entries: Array<{ entityId: string; action: string; actor: string }> }>().entries;
    expect(trail.filter((e) => e.entityId === query!.id && e.action.startsWith('status:')).map((e) => [e.action, e.actor])).toEqual(
      expect.arrayContaining([['status:answered', 'cr-crc'], ['status:reopened', 'cr-dm'], ['status:closed', 'cr-dm']]),
    );
  });

  it('lets a PI and an admin close, as before', async () => {
    const [phone] = await page('pi', '&field=phone&status=open');
    expect((await move('pi', phone!.id, 'closed', 'number checked by phone')).statusCode).toBe(200);
    const [another] = await page('admin', '&field=phone&status=open');
    expect((await move('admin', another!.id, 'closed', 'checked')).statusCode).toBe(200);
  });
});
