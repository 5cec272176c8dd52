import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { pendingActions, qcRuns, taskRuns, type QueryStatus } from '../../core/db/schema/trial.js';
import { createToolRegistry, type ToolCallResult, type ToolRegistry } from '../../core/tools/registry.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { DEMO_EVENTS, DEMO_PROJECT } from '../demo/demo-definition.js';
import { readPlantedErrors } from '../demo/demo-files.js';
import { loadDemoTrial } from '../demo/load-demo-trial.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialServices } from '../trial-services.js';
import { TRIAL_READ_TOOL_NAMES } from './read-tools.js';

/**
 * The trial assistant's read tools over a small REDCap export with identifier fields (name, phone, birth date
 * and a checkbox), in two projects that share the record id P001 with different people behind it.
 */

const DICTIONARY_HEADER =
  '"Variable / Field Name","Form Name","Section Header","Field Type","Field Label","Choices, Calculations, OR Slider Labels","Field Note","Text Validation Type OR Show Slider Number","Text Validation Min","Text Validation Max","Identifier?","Branching Logic (Show field only if...)","Required Field?"';
const DICTIONARY = [
  DICTIONARY_HEADER,
  'record_id,enrolment,,text,Subject ID,,,,,,,,',
  'patient_name,enrolment,,text,Name,,,,,,y,,',
  'phone,enrolment,,text,Phone,,,,,,y,,',
  'birth_date,enrolment,,text,Birth date,,,date_ymd,,,y,,',
  'contact,enrolment,,checkbox,Contact by,"1, Phone | 2, WeChat",,,,,y,,',
  'consent_date,enrolment,,text,Consent date,,,date_ymd,,,,,y',
  'enrollment_date,enrolment,,text,Enrolment date,,,date_ymd,,,,,y',
  'age,enrolment,,text,Age,,,integer,0,120,,,y',
  'visit_date,visit,,text,Visit date,,,date_ymd,,,,,y',
  'sbp,visit,,text,Systolic BP,,,integer,60,260,,,y',
].join('\n');
const EVENTS = ['event_name,label,day_offset,window_before,window_after', 'v1_arm_1,V1 Baseline,0,0,0', 'v2_arm_1,V2 Week 4,28,3,3', 'v3_arm_1,V3 Week 8,56,5,5'].join('\n');
const RECORDS_HEADER = 'record_id,redcap_event_name,redcap_data_access_group,patient_name,phone,birth_date,contact___1,contact___2,consent_date,enrollment_date,age,visit_date,sbp';

const RECORDS_A = [
  RECORDS_HEADER,
  'P001,v1_arm_1,SITE-01,张三丰,13900139000,1960-05-04,1,0,2025-03-01,2025-03-03,64,2025-03-03,150',
  'P001,v2_arm_1,SITE-01,,,,,,,,,2025-03-31,140', // day 28: on target
  'P001,v3_arm_1,SITE-01,,,,,,,,,2025-05-03,138', // day 61: the last day of 56 ±5
  'P002,v1_arm_1,SITE-02,李四光,13800138000,1971-11-12,0,1,2025-03-05,,52,2025-03-06,145', // no enrolment date
  'P002,v2_arm_1,SITE-02,,,,,,,,,,132', // no visit date
  'P002,v3_arm_1,SITE-02,,,,,,,,,2025-05-10,131', // day 65 from the first visit: 4 days late
  'P003,v1_arm_1,SITE-02,王五,13700137000,1980-01-01,0,0,2025-04-01,2025-04-02,45,2025-04-02,150',
  'P003,v2_arm_1,SITE-02,,,,,,,,,2025-04-25,151', // day 23: 2 days early
].join('\n');
const RECORDS_B = [RECORDS_HEADER, 'P001,v1_arm_1,SITE-09,赵六,13600136000,1990-09-09,1,1,2025-06-01,2025-06-02,33,2025-06-02,120', 'P001,v2_arm_1,SITE-09,,,,,,,,,2025-07-20,118'].join('\n');

// A classic project: no events, hence no schedule.
const RECORDS_C = ['record_id,redcap_data_access_group,patient_name,phone,birth_date,contact___1,contact___2,consent_date,enrollment_date,age,visit_date,sbp', 'C01,SITE-01,钱七,13500135000,1955-02-02,1,0,2025-01-01,2025-01-02,70,2025-01-02,160'].join('\n');

const IDENTIFIER_VALUES = ['张三丰', '13900139000', '1960-05-04', '李四光', '13800138000', '1971-11-12', '王五', '13700137000', '1980-01-01', '赵六', '13600136000', '1990-09-09', '钱七', '13500135000', '1955-02-02'];

const A = 'assist-a';
const B = 'assist-b';
const C = 'assist-c';

describe.each(testEngines())('trial assistant read tools (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let trial: TrialServices;
  let coordinator: User;
  let tools: Record<string, ToolRegistry>;
  const outputs: string[] = [];

  /** Calls a tool as the model would (JSON arguments, validated by the registry), keeping the output text. */
  async function call(projectId: string, name: string, args: unknown): Promise<ToolCallResult> {
    const result = await tools[projectId]!.run(name, JSON.stringify(args));
    outputs.push(JSON.stringify(result));
    return result;
  }
  async function ok(projectId: string, name: string, args: unknown): Promise<any> {
    const result = await call(projectId, name, args);
    expect(result.error).toBe('');
    return result.result;
  }

  async function insertQuery(projectId: string, taskRunId: string, values: { recordId: string; eventName: string; field: string; value: unknown; status: QueryStatus; ruleId: string; site: string; heldByTaskRunId?: string }) {
    await ctx.db.insert(pendingActions).values({ projectId, taskRunId, nodeId: 'checks', message: `check ${values.ruleId}`, severity: 'error', ...values });
  }

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    trial = ctx.trial;
    coordinator = (await ctx.users.create({ name: `assist-crc-${engine}`, role: 'coordinator' })).user;
    for (const [id, records, events] of [[A, RECORDS_A, EVENTS], [B, RECORDS_B, EVENTS], [C, RECORDS_C, undefined]] as const) {
      await ctx.users.createProject({ id, name: id });
      await ctx.users.addMember(id, coordinator.id);
      await trial.imports.importCsv(coordinator, id, { dictionaryCsv: DICTIONARY, eventsCsv: events, recordsCsv: records });
    }
    tools = {};
    for (const id of [A, B, C]) tools[id] = createToolRegistry().extend(await trial.readTools.forProject(coordinator, id));

    for (const projectId of [A, B]) {
      const [run] = await ctx.db.insert(qcRuns).values({ projectId, skillId: 'core-checks', status: 'completed', total: 3, createdBy: 'assist-crc', finishedAt: new Date() }).returning();
      const [task] = await ctx.db.insert(taskRuns).values({ projectId, qcRunId: run!.id, skillId: 'core-checks', recordId: 'P001', status: 'COMPLETED', currentNode: 'end' }).returning();
      if (projectId === A) {
        await insertQuery(A, task!.id, { recordId: 'P001', eventName: 'v1_arm_1', site: 'SITE-01', field: 'v1_arm_1.phone', value: '13900139000', status: 'open', ruleId: 'phone-format' });
        await insertQuery(A, task!.id, { recordId: 'P001', eventName: 'v1_arm_1', site: 'SITE-01', field: 'v1_arm_1.age', value: 64, status: 'answered', ruleId: 'age-range' });
        await insertQuery(A, task!.id, { recordId: 'P003', eventName: 'v2_arm_1', site: 'SITE-02', field: 'v2_arm_1.visit_date', value: '2025-04-25', status: 'reopened', ruleId: 'window-v2' });
        await insertQuery(A, task!.id, { recordId: 'P002', eventName: 'v2_arm_1', site: 'SITE-02', field: 'v2_arm_1.visit_date', value: null, status: 'closed', ruleId: 'required' });
      } else {
        await insertQuery(B, task!.id, { recordId: 'P001', eventName: 'v1_arm_1', site: 'SITE-09', field: 'v1_arm_1.age', value: 33, status: 'open', ruleId: 'age-range-b' });
        // Kept from the site by its run until a review decides: it reads held, not open.
        await insertQuery(B, task!.id, { recordId: 'P001', eventName: 'v1_arm_1', site: 'SITE-09', field: 'v1_arm_1.sbp', value: 250, status: 'open', ruleId: 'sbp-range-b', heldByTaskRunId: task!.id });
      }
    }
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('offers exactly the five read tools, and only to members of the project', async () => {
    expect((await trial.readTools.forProject(coordinator, A)).map((tool) => tool.name)).toEqual([...TRIAL_READ_TOOL_NAMES]);
    const outsider = (await ctx.users.create({ name: `assist-outsider-${engine}`, role: 'coordinator' })).user;
    await expect(trial.readTools.forProject(outsider, A)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // The model is given JSON schemas it can fill in; a default makes an argument optional to it.
    const specs = createToolRegistry().extend(await trial.readTools.forProject(coordinator, A)).specs(TRIAL_READ_TOOL_NAMES);
    expect(specs.find((spec) => spec.name === 'search_protocol')!.parameters).toMatchObject({ required: ['query'] });
  });

  it('reads a record without its identifier fields, naming them as withheld', async () => {
    const data = await ok(A, 'read_clinical_data', { record_id: 'P001' });
    expect(data).toMatchObject({ record_id: 'P001', site: 'SITE-01' });
    expect(data.events.map((event: { event: string; version: number }) => [event.event, event.version])).toEqual([
      ['v1_arm_1', 1],
      ['v2_arm_1', 1],
      ['v3_arm_1', 1],
    ]);
    expect(data.events[0]).toMatchObject({ label: 'V1 Baseline', fields: { age: 64, enrollment_date: '2025-03-03', visit_date: '2025-03-03', sbp: 150 } });
    expect(Object.keys(data.events[0].fields).sort()).toEqual(['age', 'consent_date', 'enrollment_date', 'sbp', 'visit_date']);
    expect(data.withheld).toEqual(['patient_name', 'phone', 'birth_date', 'contact'].map((field) => ({ field, reason: 'identifier field' })));
  });

  it('withholds identifier fields asked for by name, checkbox columns included, and returns the rest', async () => {
    const data = await ok(A, 'read_clinical_data', { record_id: 'P001', events: ['v1_arm_1'], fields: ['patient_name', 'phone', 'birth_date', 'contact', 'contact___1', 'age'] });
    expect(data.events).toEqual([{ event: 'v1_arm_1', label: 'V1 Baseline', version: 1, fields: { age: 64 } }]);
    expect(data.withheld.map((w: { field: string }) => w.field)).toEqual(['patient_name', 'phone', 'birth_date', 'contact', 'contact___1']);
    const onlyNames = await ok(A, 'read_clinical_data', { record_id: 'P002', fields: ['patient_name'] });
    expect(onlyNames.events.every((event: { fields: object }) => Object.keys(event.fields).length === 0)).toBe(true);
  });

  it('refuses unknown records, events and fields with the fix', async () => {
    const missing = await call(A, 'read_clinical_data', { record_id: 'P999' });
    expect(missing.success).toBe(false);
    expect(missing.error).toContain('record "P999" does not exist in this project; list records with get_project_stats or ask for an existing id');
    const field = await call(A, 'read_clinical_data', { record_id: 'P001', fields: ['sbp', 'heart_rate'] });
    expect(field.error).toMatch(/unknown field\(s\) heart_rate; known fields include record_id, consent_date, enrollment_date, age, visit_date, sbp/);
    expect(field.error).not.toContain('patient_name');
    const event = await call(A, 'read_clinical_data', { record_id: 'P003', events: ['v3_arm_1'] });
    expect(event.error).toContain('has no data at event(s) v3_arm_1; it has data at v1_arm_1, v2_arm_1');
    const args = await call(A, 'read_clinical_data', {});
    expect(args.error).toContain('record_id:');
  });

  it("keeps each project's tools to its own records, even under the same record id", async () => {
    const a = await ok(A, 'read_clinical_data', { record_id: 'P001', fields: ['age'] });
    const b = await ok(B, 'read_clinical_data', { record_id: 'P001', fields: ['age'] });
    expect([a.site, a.events[0].fields.age]).toEqual(['SITE-01', 64]);
    expect([b.site, b.events[0].fields.age]).toEqual(['SITE-09', 33]);
    expect(b.events).toHaveLength(2);
    for (const [name, args] of [
      ['read_clinical_data', { record_id: 'P002' }],
      ['check_visit_window', { record_id: 'P002', event: 'v2_arm_1' }],
    ] as const) {
      expect((await call(B, name, args)).error, name).toContain('record "P002" does not exist in this project');
    }
    const queries = await ok(B, 'list_open_queries', {});
    expect(queries.queries.map((q: { rule: string }) => q.rule).sort()).toEqual(['age-range-b', 'sbp-range-b']);
    expect((await ok(B, 'list_open_queries', { record_id: 'P003' })).queries).toEqual([]);
  });

  it('reads a classic project (no events) as one row', async () => {
    const data = await ok(C, 'read_clinical_data', { record_id: 'C01', fields: ['age', 'phone'] });
    expect(data).toEqual({ record_id: 'C01', site: 'SITE-01', events: [{ event: '', label: null, version: 1, fields: { age: 70 } }], withheld: [{ field: 'phone', reason: 'identifier field' }] });
  });

  it('counts subjects, rows, sites, events, queries and QC runs as the data has them', async () => {
    const stats = await ok(A, 'get_project_stats', {});
    expect(stats).toMatchObject({
      subjects: 3,
      record_rows: 8,
      sites: [
        { site: 'SITE-01', subjects: 1 },
        { site: 'SITE-02', subjects: 2 },
      ],
      queries_by_status: { open: 1, answered: 1, reopened: 1, closed: 1, cancelled: 0 },
      live_queries: 3,
      record_ids: { sample: ['P001', 'P002', 'P003'], complete: true },
    });
    expect(stats.events).toEqual([
      { event: 'v1_arm_1', label: 'V1 Baseline', arm: 1, day_offset: 0, window_before: 0, window_after: 0 },
      { event: 'v2_arm_1', label: 'V2 Week 4', arm: 1, day_offset: 28, window_before: 3, window_after: 3 },
      { event: 'v3_arm_1', label: 'V3 Week 8', arm: 1, day_offset: 56, window_before: 5, window_after: 5 },
    ]);
    expect(stats.last_qc_runs).toHaveLength(1);
    expect(stats.last_qc_runs[0]).toMatchObject({ skill: 'core-checks', status: 'completed', total: 3, completed: 1, failed: 0 });
    const imported = Date.parse(stats.last_import_at);
    expect(Date.now() - imported).toBeLessThan(10 * 60_000);
    expect(Date.now() - imported).toBeGreaterThanOrEqual(0);

    const other = await ok(B, 'get_project_stats', {});
    expect(other).toMatchObject({ subjects: 1, record_rows: 2, sites: [{ site: 'SITE-09', subjects: 1 }], queries_by_status: { held: 1, open: 1, answered: 0 }, live_queries: 2 });
    const listed = await ok(B, 'list_open_queries', {});
    expect(listed.queries.map((q: { rule: string; status: string; held_for_review: boolean }) => [q.rule, q.status, q.held_for_review]).sort()).toEqual([
      ['age-range-b', 'open', false],
      ['sbp-range-b', 'held', true],
    ]);
    expect((await ok(B, 'list_open_queries', { status: 'open' })).queries.map((q: { rule: string }) => q.rule)).toEqual(['age-range-b']);
  });

  it('lists live queries newest first, filtered, with identifier values withheld', async () => {
    const all = await ok(A, 'list_open_queries', {});
    expect(all).toMatchObject({ statuses: ['open', 'answered', 'reopened', 'held'], returned: 3, has_more: false });
    expect(all.queries.map((q: { rule: string }) => q.rule).sort()).toEqual(['age-range', 'phone-format', 'window-v2']);
    const phone = all.queries.find((q: { rule: string }) => q.rule === 'phone-format');
    expect(phone).toMatchObject({ record_id: 'P001', event: 'v1_arm_1', field: 'v1_arm_1.phone', status: 'open', value: null, value_withheld: 'identifier field', message: 'check phone-format' });
    expect(all.queries.find((q: { rule: string }) => q.rule === 'age-range')).toMatchObject({ value: 64, status: 'answered' });
    expect(all.queries.find((q: { rule: string }) => q.rule === 'age-range')).not.toHaveProperty('value_withheld');

    const site = await ok(A, 'list_open_queries', { site: 'SITE-02' });
    expect(site.queries.map((q: { rule: string; value: unknown }) => [q.rule, q.value])).toEqual([['window-v2', '2025-04-25']]);
    const reopened = await ok(A, 'list_open_queries', { status: 'reopened' });
    expect(reopened.queries.map((q: { rule: string }) => q.rule)).toEqual(['window-v2']);
    const limited = await ok(A, 'list_open_queries', { limit: 2 });
    expect([limited.returned, limited.has_more]).toEqual([2, true]);
    expect((await call(A, 'list_open_queries', { status: 'closed' })).error).toContain('status:');
  });

  it('checks visit windows: on target, on the last allowed day, early, late from the first visit', async () => {
    const onTarget = await ok(A, 'check_visit_window', { record_id: 'P001', event: 'v2_arm_1' });
    expect(onTarget).toMatchObject({
      visit_date_field: 'visit_date',
      visit_date: '2025-03-31',
      anchor: { source: 'enrolment date', field: 'enrollment_date', event: 'v1_arm_1', date: '2025-03-03' },
      target_day: 28,
      allowed_range: { from_day: 25, to_day: 31 },
      actual_day: 28,
      in_window: true,
      days_early: 0,
      days_late: 0,
    });
    expect(await ok(A, 'check_visit_window', { record_id: 'P001', event: 'v3_arm_1' })).toMatchObject({ actual_day: 61, allowed_range: { from_day: 51, to_day: 61 }, in_window: true, days_late: 0 });
    expect(await ok(A, 'check_visit_window', { record_id: 'P003', event: 'v2_arm_1' })).toMatchObject({ actual_day: 23, in_window: false, days_early: 2, days_late: 0 });
    // P002 has no enrolment date: day 0 is the first visit (V1, day 0 of the schedule).
    expect(await ok(A, 'check_visit_window', { record_id: 'P002', event: 'v3_arm_1' })).toMatchObject({
      anchor: { source: 'first visit date', field: 'visit_date', event: 'v1_arm_1', date: '2025-03-06' },
      actual_day: 65,
      in_window: false,
      days_early: 0,
      days_late: 4,
    });
  });

  it('says exactly what is missing when it cannot tell', async () => {
    expect(await ok(A, 'check_visit_window', { record_id: 'P002', event: 'v2_arm_1' })).toMatchObject({ in_window: null, missing: 'visit date', message: expect.stringContaining('Record P002 has no value in visit_date at v2_arm_1') });
    expect(await ok(A, 'check_visit_window', { record_id: 'P003', event: 'v3_arm_1' })).toMatchObject({ in_window: null, missing: 'visit data', message: expect.stringContaining('Record P003 has no data at v3_arm_1') });
    expect(await ok(C, 'check_visit_window', { record_id: 'C01', event: 'v2_arm_1' })).toMatchObject({ in_window: null, missing: 'visit schedule', message: expect.stringContaining('no visit schedule') });
    expect((await call(A, 'check_visit_window', { record_id: 'P001', event: 'v9_arm_1' })).error).toContain('event "v9_arm_1" is not in this project\'s schedule; events are v1_arm_1, v2_arm_1, v3_arm_1');
    const identifier = await ok(A, 'check_visit_window', { record_id: 'P001', event: 'v2_arm_1', date_field: 'birth_date' });
    expect(identifier).toMatchObject({ in_window: null, missing: 'visit date field', message: expect.stringContaining('birth_date is an identifier field') });
  });

  it('says when the schedule has no windows at all', async () => {
    // REDCap without scheduling exports events without offsets: every event is day 0 with no window.
    await trial.imports.importCsv(coordinator, C, { dictionaryCsv: DICTIONARY, eventsCsv: 'unique_event_name,event_name,arm_num\nv1_arm_1,V1,1\nv2_arm_1,V2,1', recordsCsv: RECORDS_HEADER });
    expect(await ok(C, 'check_visit_window', { record_id: 'C01', event: 'v2_arm_1' })).toMatchObject({ in_window: null, missing: 'visit windows', message: expect.stringContaining('every event of arm 1 is day 0') });
  });

  it('tells the model how to add protocol documents when the project has none', async () => {
    const result = await ok(A, 'search_protocol', { query: 'V2 visit window' });
    expect(result.chunks).toEqual([]);
    expect(result.note).toContain('POST /api/iit/projects/assist-a/protocol-documents');
    expect(result.note).toContain(ctx.hasVectorStore ? 'has no protocol documents yet' : 'no vector store (pgvector)');
  });

  it("agrees with the demo trial's window rules: out of window exactly where a window error was planted", async () => {
    await loadDemoTrial(createTrialStore(ctx.db), 'test');
    await ctx.users.addMember(DEMO_PROJECT.id, coordinator.id);
    const demo = createToolRegistry().extend(await trial.readTools.forProject(coordinator, DEMO_PROJECT.id));
    const stats = (await demo.run('get_project_stats', {})).result as { subjects: number; record_ids: { sample: string[] } };
    expect(stats.subjects).toBe(200);
    const planted = readPlantedErrors().filter((error) => error.kind === 'visit_out_of_window');
    expect(planted.length).toBeGreaterThan(0);
    const outside: string[] = [];
    const recordIds = Array.from({ length: 200 }, (_, i) => `S${String(i + 1).padStart(3, '0')}`);
    for (const recordId of recordIds) {
      for (const { eventName } of DEMO_EVENTS.slice(1)) {
        const result = await demo.run('check_visit_window', { record_id: recordId, event: eventName });
        expect(result.error, `${recordId} ${eventName}`).toBe('');
        if ((result.result as { in_window: boolean | null }).in_window === false) outside.push(`${recordId} ${eventName}`);
      }
    }
    expect(outside.sort()).toEqual(planted.map((error) => `${error.recordId} ${error.eventName}`).sort());
    const first = planted[0]!;
    const day = Number(/day (\d+)/.exec(first.detail)![1]);
    expect((await demo.run('check_visit_window', { record_id: first.recordId, event: first.eventName })).result).toMatchObject({ actual_day: day, in_window: false, anchor: { field: 'enrollment_date' } });
  });

  // Last: every output of every test above, failed calls included, as the model would have read it.
  it('never let an identifier value out, in any output of any tool', () => {
    const text = outputs.join('\n');
    expect(outputs.length).toBeGreaterThan(30);
    for (const value of IDENTIFIER_VALUES) expect(text, value).not.toContain(value);
    // The checkbox of an identifier field appears only as a withheld name, never as a column with a value.
    expect(text).not.toMatch(/"contact___\d+":/);
  });
});
