import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQcServer, type QcServer } from '../../testing/qc-server.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { getQcProgress, startQcRun } from '../../trial/qc/qc-runs.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import type { TrialField, TrialRecord } from '../../trial/store/types.js';

/**
 * What an attacker found: a rule on an identifier field (a phone number) opens a query, and the audit trail
 * showed a viewer the number in `newValue.value` of `opened`, `fired_again` and `status:reopened` entries, while
 * the query list masked it. Here the queries come from real QC runs, and every read a viewer or coordinator can
 * make is searched for the identifier values as text, wherever they might sit in the answer.
 */
const PROJECT = 'audit-mask';
const PHONES = ['1380013800', '1390013900', '1370013700'];
const BIRTH = '1990/02/01';

const SKILL = `
id: contact-checks
name: Contact checks
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - { id: phone-format, field: phone, logic: { matches: [{ var: phone }, "^1[3-9][0-9]{9}$"] }, message: "Phone must be 11 digits" }
      - { id: born-before-2010, field: birth_date, logic: { date_before: [{ var: birth_date }, "2010-01-01"] }, message: "Subject must be born before 2010" }
      - { id: adult-at-enrolment, field: age, logic: { date_before: [{ var: birth_date }, "2008-01-01"] }, message: "Subject must be an adult at enrolment" }
      - { id: born-in-month, field: age, logic: { date_before: [{ substr: [{ var: birth_date }, 0, 7] }, "2010-01-01"] }, message: "Birth month before 2010" }
    on_pass: end_ok
    on_fail: end_found
`;

const field = (fieldName: string, fieldType: TrialField['fieldType'], label: string): TrialField => ({ fieldName, formName: 'enrolment', fieldType, label, choices: [], validationMin: null, validationMax: null, required: false });
const row = (phone: string): TrialRecord => ({ recordId: 'S001', eventName: '', site: 'SITE-01', data: { record_id: 'S001', phone, birth_date: BIRTH, age: 40 } });

describe.each(testEngines())('identifier values in the audit trail on %s', (engine) => {
  let server: QcServer | undefined;
  let ctx: QcServer['ctx'];
  let app: QcServer['app'];
  const headers: Record<'admin' | 'pi' | 'crc' | 'viewer', { authorization: string }> = {} as never;

  beforeAll(async () => {
    server = await startQcServer({ engine, name: 'audit-mask', skills: { 'contact-checks': SKILL } });
    ({ ctx, app } = server);
    for (const role of ['admin', 'pi', 'crc', 'viewer'] as const) {
      const made = await ctx.users.create({ name: `am-${role}`, role: role === 'crc' ? 'coordinator' : role });
      headers[role] = { authorization: `Bearer ${made.token}` };
      if (role !== 'admin') {
        if (role === 'pi') await ctx.users.createProject({ id: PROJECT, name: 'Audit masking' });
        await ctx.users.addMember(PROJECT, made.user.id);
      }
    }
    const store = createTrialStore(ctx.db);
    await store.replaceDictionary(PROJECT, [field('record_id', 'text', 'Subject'), field('phone', 'text', 'Phone'), field('birth_date', 'text', 'Birth date'), field('age', 'integer', 'Age')], 'test');
    await ctx.db.execute(sql`UPDATE trial_fields SET identifier = true WHERE project_id = ${PROJECT} AND field_name IN ('phone', 'birth_date')`);

    const qc = async () => {
      const started = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: PROJECT, skill: ctx.skills.get('contact-checks'), actor: 'dm' });
      await waitFor(async () => (await getQcProgress(ctx.db, started.id))?.status === 'completed', 'the QC run to complete');
    };
    // Opened with the first number; fires again with a second; closed, then reopened with a third.
    await store.importRecords(PROJECT, [row(PHONES[0]!)], { actor: 'site' });
    await qc();
    await store.importRecords(PROJECT, [row(PHONES[1]!)], { actor: 'site' });
    await qc();
    const queries = (await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/queries`, headers: headers.admin })).json().queries as Array<{ id: string; ruleId: string }>;
    const phoneQuery = queries.find((q) => q.ruleId === 'phone-format')!;
    const closed = await app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/queries/${phoneQuery.id}/transition`, headers: headers.admin, payload: { to: 'closed', comment: 'site called' } });
    expect(closed.statusCode, closed.body).toBe(200);
    await store.importRecords(PROJECT, [row(PHONES[2]!)], { actor: 'site' });
    await qc();
  });

  afterAll(async () => {
    await server?.close();
  });

  const get = (url: string, role: keyof typeof headers) => app.inject({ method: 'GET', url, headers: headers[role] });
  const leaks = (body: string) => [...PHONES, BIRTH].filter((value) => body.includes(value) || body.includes(JSON.stringify(value).slice(1, -1)));

  it('the audit trail of queries held every number, as the attacker saw', async () => {
    const trail = (await get(`/api/iit/projects/${PROJECT}/audit?entityType=query`, 'pi')).json().entries as Array<{ action: string }>;
    expect(trail.map((e) => e.action)).toEqual(expect.arrayContaining(['opened', 'fired_again', 'status:closed', 'status:reopened']));
    expect(leaks(JSON.stringify(trail)).sort()).toEqual([...PHONES, BIRTH].sort());
  });

  it.each(['viewer', 'crc'] as const)('shows a %s no identifier value in any audit entry, query, record or report', async (role) => {
    const urls = [
      `/api/iit/projects/${PROJECT}/audit`,
      `/api/iit/projects/${PROJECT}/audit?entityType=query`,
      `/api/iit/projects/${PROJECT}/audit?entityType=record`,
      `/api/iit/projects/${PROJECT}/queries`,
      `/api/iit/projects/${PROJECT}/records`,
      `/api/iit/projects/${PROJECT}/records/S001`,
      `/api/iit/projects/${PROJECT}/report`,
      `/api/iit/projects/${PROJECT}/report?format=csv`,
      `/api/iit/projects/${PROJECT}/task-runs`,
    ];
    for (const url of urls) {
      const response = await get(url, role);
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
      expect(leaks(response.body), url).toEqual([]);
    }
    const trail = (await get(`/api/iit/projects/${PROJECT}/audit?entityType=query`, role)).json().entries as Array<{ action: string; newValue: { value?: unknown }; maskedFields?: string[] }>;
    // The age rule's entries carry the age, which is not an identifier.
    const withValues = trail.filter((e) => ['opened', 'fired_again', 'status:reopened'].includes(e.action) && e.newValue.value !== 40);
    expect(withValues.length).toBeGreaterThanOrEqual(4);
    for (const entry of withValues) expect(entry).toMatchObject({ newValue: { value: null }, maskedFields: [expect.stringMatching(/^(phone|birth_date)$/)] });
    // The operator's error on the birth date quoted the value in the query's message; it is cut out, the rest kept.
    const queries = (await get(`/api/iit/projects/${PROJECT}/queries`, role)).json().queries as Array<{ ruleId: string; message: string; masked: boolean }>;
    expect(queries.find((q) => q.ruleId === 'born-before-2010')).toMatchObject({ masked: true, message: expect.stringMatching(/not an ISO date.*••••/) });
    // A rule attached to a field that is not an identifier (age) read one (the birth date): its error is not masked
    // by its field, so the value was cut out when the finding was made.
    expect(queries.find((q) => q.ruleId === 'adult-at-enrolment')).toMatchObject({ masked: false, message: expect.stringMatching(/not an ISO date.*••••/) });
  });

  it('keeps identifier values out of the messages everyone reads, the PI included, and out of a dry run', async () => {
    const queries = (await get(`/api/iit/projects/${PROJECT}/queries`, 'pi')).json().queries as Array<{ ruleId: string; message: string; value: unknown }>;
    expect(queries.find((q) => q.ruleId === 'adult-at-enrolment')).toMatchObject({ message: expect.stringContaining('••••'), value: 40 });
    // A rule that cut the birth date before its operator failed quoted "1990/02", which no whole-value replacement
    // finds: its error keeps only its head, for every reader.
    const partial = queries.find((q) => q.ruleId === 'born-in-month')!;
    expect(partial.message).toMatch(/^Rule "born-in-month" could not be evaluated \(its detail quoted part of an identifier value/);
    expect(partial.message).not.toContain(BIRTH.slice(0, 7));
    const stored = await ctx.db.execute(sql`SELECT message FROM pending_actions WHERE project_id = ${PROJECT}`);
    expect(leaks(JSON.stringify(stored))).toEqual([]);
    expect(JSON.stringify(stored)).not.toContain(BIRTH.slice(0, 7));
    const dryRun = await app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/skills/dry-run`, headers: headers.pi, payload: { yaml: SKILL } });
    expect(dryRun.statusCode, dryRun.body).toBe(200);
    expect(dryRun.body).toContain('adult-at-enrolment');
    expect(leaks(dryRun.body.replaceAll(/"value":"[^"]*"/g, ''))).toEqual([]);
  });

  it('shows the PI the values (PIs see identifiers)', async () => {
    const trail = (await get(`/api/iit/projects/${PROJECT}/audit?entityType=query`, 'pi')).json().entries as Array<{ action: string; newValue: { value?: unknown } }>;
    expect(trail.find((e) => e.action === 'status:reopened')!.newValue.value).toBe(PHONES[2]);
  });

  it("still masks the values of a query whose row is gone (its run was deleted), since its field can no longer be named", async () => {
    await ctx.db.execute(sql`DELETE FROM pending_actions WHERE project_id = ${PROJECT}`);
    const response = await get(`/api/iit/projects/${PROJECT}/audit?entityType=query`, 'viewer');
    expect(response.statusCode).toBe(200);
    expect(leaks(response.body)).toEqual([]);
    expect((await get(`/api/iit/projects/${PROJECT}/audit?entityType=query`, 'pi')).body).toContain(PHONES[2]!);
  });
});
