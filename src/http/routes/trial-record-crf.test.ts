import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordCrf, TrialRecordView } from '../../contract/index.js';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { importRedcapCsv } from '../../trial/import/import-redcap-csv.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { buildServer } from '../server.js';

/**
 * GET /records/:recordId carries the record as a CRF (issue 25: "fields in dictionary order under their forms,
 * labels beside names, coded values shown as their choice labels, visits as columns with their event labels,
 * flagged cells highlighted with their queries"), masked for a member without identifier access.
 */
const LONG = 'crf-long';
const CLASSIC = 'crf-classic';
const BARE = 'crf-bare';
const testData = (name: string) => readFileSync(path.join(import.meta.dirname, '../../../test-data/trial/odm', name), 'utf8');

describe('the record view as a CRF', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  const auth: Record<'admin' | 'coordinator' | 'granted', { authorization: string }> = {} as never;
  const queryIds: Record<'sbp' | 'symptoms' | 'dob' | 'closed' | 'classic', string> = {} as never;

  beforeAll(async () => {
    ctx = await buildTestContext();
    app = await buildServer(ctx, { serveConsole: false });
    const store = createTrialStore(ctx.db);
    for (const id of [LONG, CLASSIC, BARE]) await ctx.users.createProject({ id, name: id });
    await importRedcapCsv(store, LONG, { dictionaryCsv: testData('dictionary.csv'), eventsCsv: testData('events.csv'), armsCsv: testData('arms.csv'), recordsCsv: testData('records.csv') }, 'test');
    // The same dictionary without events: a classic trial, one row per record.
    const classicRecords = 'record_id,redcap_data_access_group,consent_date,dob,sex,demographics_complete,visit_date,weight,sbp,symptoms___1,symptoms___2,symptoms___3,vitals_complete,hba1c,smoker,lab_notes,labs_complete\n'
      + `7,site_a,2024-01-05,1970-01-01,2,2,2024-01-06,80,300,0,1,1,2,6,1,${'x'.repeat(200)},2\n`;
    await importRedcapCsv(store, CLASSIC, { dictionaryCsv: testData('dictionary.csv'), recordsCsv: classicRecords }, 'test');
    // Data without a dictionary, as an old import left it.
    await store.importRecords(BARE, [{ recordId: 'B1', eventName: '', site: '', data: { age: 40 } }], { actor: 'test' });

    for (const [who, role] of [['admin', 'admin'], ['coordinator', 'coordinator'], ['granted', 'coordinator']] as const) {
      const made = await ctx.users.create({ name: `crf-${who}`, role });
      for (const id of [LONG, CLASSIC, BARE]) await ctx.users.addMember(id, made.user.id);
      auth[who] = { authorization: `Bearer ${made.token}` };
      if (who === 'granted') await app.inject({ method: 'PATCH', url: `/api/projects/${LONG}/members/${made.user.id}`, headers: auth.admin, payload: { canViewIdentifiers: true } });
    }

    const [run] = await ctx.db.insert(taskRuns).values({ projectId: LONG, skillId: 'test', recordId: '101', status: 'COMPLETED', currentNode: 'end' }).returning();
    const raise = async (projectId: string, recordId: string, eventName: string, field: string, value: unknown, status: 'open' | 'closed' = 'open') => {
      const [row] = await ctx.db
        .insert(pendingActions)
        .values({ projectId, taskRunId: run!.id, recordId, eventName, nodeId: 'checks', ruleId: `r-${field}`, field, message: `check ${field} (${String(value)})`, severity: 'error', value, status })
        .returning({ id: pendingActions.id });
      return row!.id;
    };
    queryIds.sbp = await raise(LONG, '101', 'baseline_arm_1', 'baseline_arm_1.sbp', 132);
    queryIds.symptoms = await raise(LONG, '101', 'baseline_arm_1', 'symptoms___1', '1');
    queryIds.dob = await raise(LONG, '101', 'screening_arm_1', 'dob', '1961-05-12');
    queryIds.closed = await raise(LONG, '101', 'week4_arm_1', 'week4_arm_1.weight', 71.9, 'closed');
    const [classicRun] = await ctx.db.insert(taskRuns).values({ projectId: CLASSIC, skillId: 'test', recordId: '7', status: 'COMPLETED', currentNode: 'end' }).returning();
    const [classic] = await ctx.db
      .insert(pendingActions)
      .values({ projectId: CLASSIC, taskRunId: classicRun!.id, recordId: '7', eventName: '', nodeId: 'checks', ruleId: 'sbp-range', field: 'sbp', message: 'SBP 300 is implausible', severity: 'error', value: 300 })
      .returning({ id: pendingActions.id });
    queryIds.classic = classic!.id;
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const view = async (projectId: string, recordId: string, who: keyof typeof auth = 'admin') => {
    const response = await app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/records/${recordId}`, headers: auth[who] });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as TrialRecordView;
  };
  const crfOf = async (projectId: string, recordId: string, who: keyof typeof auth = 'admin') => (await view(projectId, recordId, who)).crf!;

  it('lists forms in dictionary order with their fields, labels, types and choices', async () => {
    const crf = await crfOf(LONG, '101');
    expect(crf.forms.map((form) => [form.name, form.label])).toEqual([['demographics', 'Demographics'], ['vitals', 'Vitals'], ['labs', 'Labs']]);
    expect(crf.forms.map((form) => form.fields.map((field) => field.name))).toEqual([
      ['consent_date', 'dob', 'sex'],
      ['visit_date', 'weight', 'sbp', 'symptoms'],
      ['hba1c', 'smoker', 'lab_notes'],
    ]);
    const fields = crf.forms.flatMap((form) => form.fields);
    expect(fields.find((f) => f.name === 'sex')).toEqual({ name: 'sex', label: '性别 Sex', type: 'radio', identifier: false, choices: [{ code: '1', label: 'Male' }, { code: '2', label: 'Female' }] });
    expect(fields.find((f) => f.name === 'symptoms')?.choices.map((c) => c.label)).toEqual(['Headache', 'Dizziness', 'Nausea, vomiting']);
    expect(fields.find((f) => f.name === 'dob')).toMatchObject({ label: 'Date of birth', identifier: true });
    expect(fields.find((f) => f.name === 'lab_notes')?.type).toBe('notes');
  });

  it("shows the record's arm's visits as columns in schedule order with their labels, a visit not done included", async () => {
    const armOne = await crfOf(LONG, '103');
    expect(armOne.events.map((e) => [e.eventName, e.label, e.armName, e.hasData])).toEqual([
      ['screening_arm_1', 'Screening', 'Treatment', true],
      ['baseline_arm_1', 'Baseline', 'Treatment', true],
      ['week4_arm_1', 'Week 4', 'Treatment', false],
    ]);
    expect(armOne.events[0]).toMatchObject({ site: 'site_b', version: 1 });
    const armTwo = await crfOf(LONG, '201');
    expect(armTwo.events.map((e) => e.eventName)).toEqual(['screening_arm_2', 'baseline_arm_2', 'week4_arm_2']);
  });

  it('gives values per visit and field, a checkbox as its checked codes, form status kept', async () => {
    const crf = await crfOf(LONG, '101');
    expect(crf.values.baseline_arm_1).toMatchObject({ visit_date: '2024-03-08', weight: 72.5, sbp: 132, symptoms: ['1'], smoker: '0', vitals_complete: '2' });
    expect(crf.values.baseline_arm_1?.lab_notes).toBe('Sample "haemolysed", redrawn\nsame day & <ok>');
    expect(crf.values.week4_arm_1?.symptoms).toEqual([]);
    expect(crf.values.screening_arm_1?.symptoms).toBeNull();
    expect(crf.values.screening_arm_1).toMatchObject({ sex: '1', dob: '1961-05-12' });
    expect(crf.values.baseline_arm_1).not.toHaveProperty('symptoms___1');
    expect(crf.maskedFields).toEqual([]);
  });

  it('attaches each query to its (event, field) cell: event-prefixed fields and checkbox choices resolved', async () => {
    const { crf, queries } = await view(LONG, '101');
    const cells = (crf as RecordCrf).queryCells;
    const cellOf = (id: string) => cells.filter((cell) => cell.queryIds.includes(id)).map(({ eventName, field }) => [eventName, field]);
    expect(cellOf(queryIds.sbp)).toEqual([['baseline_arm_1', 'sbp']]);
    expect(cellOf(queryIds.symptoms)).toEqual([['baseline_arm_1', 'symptoms']]);
    expect(cellOf(queryIds.dob)).toEqual([['screening_arm_1', 'dob']]);
    expect(cellOf(queryIds.closed)).toEqual([['week4_arm_1', 'weight']]);
    // Every id in a cell is one of the view's queries, which carry message and status for the page.
    expect(new Set(cells.flatMap((cell) => cell.queryIds))).toEqual(new Set(queries.map((q) => q.id)));
  });

  it('masks identifier fields in the CRF and their queries for a member without identifier access, and shows them to one with it', async () => {
    const masked = await view(LONG, '101', 'coordinator');
    expect(masked.crf!.maskedFields).toEqual(['dob']);
    expect(masked.crf!.values.screening_arm_1?.dob).toBeNull();
    expect(masked.crf!.values.screening_arm_1?.sex).toBe('1');
    expect(JSON.stringify(masked)).not.toContain('1961-05-12');
    expect(masked.queries.find((q) => q.id === queryIds.dob)).toMatchObject({ value: null, masked: true });
    expect(masked.events.find((e) => e.eventName === 'screening_arm_1')?.maskedFields).toEqual(['dob']);

    const granted = await view(LONG, '101', 'granted');
    expect(granted.crf!.maskedFields).toEqual([]);
    expect(granted.crf!.values.screening_arm_1?.dob).toBe('1961-05-12');
  });

  it('shows a classic trial as one column, and its record-level query on the field', async () => {
    const crf = await crfOf(CLASSIC, '7');
    expect(crf.events).toEqual([{ eventName: '', label: '', armNum: null, armName: null, hasData: true, site: 'site_a', version: 1, updatedAt: expect.any(String) }]);
    expect(crf.values['']).toMatchObject({ sbp: 300, symptoms: ['2', '3'], sex: '2' });
    expect(crf.queryCells).toEqual([{ eventName: '', field: 'sbp', queryIds: [queryIds.classic] }]);
  });

  it('answers crf null for data without a dictionary, so the page shows the raw rows', async () => {
    const bare = await view(BARE, 'B1');
    expect(bare.crf).toBeNull();
    expect(bare.events).toHaveLength(1);
  });

  it('keeps the record view for members only', async () => {
    const outsider = await ctx.users.create({ name: 'crf-outsider', role: 'coordinator' });
    const response = await app.inject({ method: 'GET', url: `/api/iit/projects/${LONG}/records/101`, headers: { authorization: `Bearer ${outsider.token}` } });
    expect(response.statusCode).toBe(404);
  });
});
