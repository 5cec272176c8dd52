import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../../testing/test-context.js';
import { waitFor } from '../../testing/wait-for.js';
import { buildServer } from '../server.js';
import { registerWorkers } from '../../workers.js';
import { ensureDemoTrial } from '../../trial/demo/load-demo-trial.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { cronQueue } from '../../trial/qc/queues.js';
import { multipartBody, type MultipartFile } from '../../testing/multipart.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

const demo = (file: string) => readFileSync(path.join(process.cwd(), 'data', 'demo-trial', file));

const multipart = (files: Record<string, MultipartFile>) => multipartBody({ files });

describe('trial QC HTTP API', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let member: { authorization: string };
  let outsider: { authorization: string };
  let workers: { stop(): void };

  beforeAll(async () => {
    ctx = await buildTestContext({ startJobs: true });
    app = await buildServer(ctx, { serveConsole: false });
    workers = await registerWorkers(ctx);
    const coordinator = await ctx.users.create({ name: 'crc', role: 'coordinator' });
    const other = await ctx.users.create({ name: 'other', role: 'coordinator' });
    await ctx.users.createProject({ id: 'trial-a', name: 'Trial A' });
    await ctx.users.addMember('trial-a', coordinator.user.id);
    member = { authorization: `Bearer ${coordinator.token}` };
    outsider = { authorization: `Bearer ${other.token}` };
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
  });

  it('imports a REDCap CSV export through multipart and lists the project with its counts', async () => {
    const upload = multipart({ dictionary: { name: 'dictionary.csv', content: demo('dictionary.csv') }, events: { name: 'events.csv', content: demo('events.csv') }, records: { name: 'records.csv', content: demo('records.csv') } });
    const response = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/imports', headers: { ...member, ...upload.headers }, payload: upload.payload });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().records).toMatchObject({ created: 800 });

    const projects = await app.inject({ method: 'GET', url: '/api/iit/projects', headers: member });
    expect(projects.json().projects).toEqual([expect.objectContaining({ id: 'trial-a', subjects: 200, rows: 800 })]);
  });

  it('rejects a bad import file with every bad line and writes nothing', async () => {
    const broken = demo('records.csv').toString('utf8').replace('S001,v1_arm_1,SITE-03,2025-07-01,2025-07-11,57', 'S001,v1_arm_1,SITE-03,2025-07-01,2025-07-11,abc');
    const upload = multipart({ dictionary: { name: 'dictionary.csv', content: demo('dictionary.csv') }, records: { name: 'records.csv', content: broken } });
    const response = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/imports', headers: { ...member, ...upload.headers }, payload: upload.payload });
    expect(response.statusCode).toBe(422);
    expect(response.json().code).toBe('IMPORT_INVALID');
    expect(response.json().message).toMatch(/line 2, field age/);
    const record = await app.inject({ method: 'GET', url: '/api/iit/projects/trial-a/records/S001', headers: member });
    expect(record.json().events[0].data.age).toBe(57);
  });

  it('hides a project from users who are not its members', async () => {
    for (const url of ['/api/iit/projects/trial-a/records', '/api/iit/projects/trial-a/queries', '/api/iit/projects/trial-a/qc-runs', '/api/iit/projects/trial-a/audit']) {
      const response = await app.inject({ method: 'GET', url, headers: outsider });
      expect(response.statusCode, url).toBe(404);
    }
    const projects = await app.inject({ method: 'GET', url: '/api/iit/projects', headers: outsider });
    expect(projects.json().projects).toEqual([]);
  });

  it('starts a QC run that finds the planted errors and reports them, with the shipped skill and its next cron run', async () => {
    const admin = await ctx.users.create({ name: 'skills-admin', role: 'admin' });
    const skills = await app.inject({ method: 'GET', url: '/api/iit/skills', headers: { authorization: `Bearer ${admin.token}` } });
    const skill = skills.json().skills.find((s: { id: string }) => s.id === 'demo-core-checks');
    expect(skill).toMatchObject({ schedule: '0 6 * * 1' });
    // A coordinator of another trial is not shown the demo trial's skill.
    const ofMember = await app.inject({ method: 'GET', url: '/api/iit/skills', headers: member });
    expect(ofMember.body).not.toContain('demo-htn-01');
    expect(new Date(skill.nextRun).getUTCDay()).toBe(1);

    // The shipped skill is limited to the demo project: running it elsewhere is a clear 400 that names no other project.
    const refused = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/qc-runs', headers: member, payload: { skillId: 'demo-core-checks' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('Skill "demo-core-checks" does not apply to project "trial-a"');
    expect(refused.body).not.toContain('demo-htn-01');

    const unknown = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/qc-runs', headers: member, payload: { skillId: 'nope' } });
    expect(unknown.statusCode).toBe(404);
    const noSkill = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/qc-runs', headers: member, payload: {} });
    expect(noSkill.statusCode).toBe(400);
    expect(noSkill.json().message).toContain('body.skillId: is required');
  });

  it('runs the demo skill over the demo trial as a batch and raises exactly the planted errors as queries', async () => {
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    const admin = await ctx.users.create({ name: 'dm', role: 'admin' });
    const auth = { authorization: `Bearer ${admin.token}` };
    // 50 000 unknown ids: a short answer that counts them, not the whole list back.
    const manyUnknown = await app.inject({ method: 'POST', url: '/api/iit/projects/demo-htn-01/qc-runs', headers: auth, payload: { skillId: 'demo-core-checks', recordIds: Array.from({ length: 50_000 }, (_, i) => `X${i}`) } });
    expect(manyUnknown.statusCode).toBe(404);
    expect(manyUnknown.json()).toMatchObject({ details: { unknownCount: 50_000 } });
    expect(manyUnknown.json().message).toContain('and 49980 more');
    expect(manyUnknown.body.length).toBeLessThan(4096);
    const started = await app.inject({ method: 'POST', url: '/api/iit/projects/demo-htn-01/qc-runs', headers: auth, payload: { skillId: 'demo-core-checks' } });
    expect(started.statusCode, started.body).toBe(202);
    const { id, total } = started.json();
    expect(total).toBe(200);
    const progressOf = async (runId: string) => {
      const current = (await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${runId}`, headers: auth })).json();
      return current.status !== 'running' && current;
    };
    const progress = await waitFor(() => progressOf(id), 'the QC run to leave running', 90_000, 250);
    // Every record is checked; the 15 with findings wait for the data manager, so the batch is not "completed".
    expect(progress).toMatchObject({ status: 'waiting_review', done: 200, failed: 0, suspended: 15, completed: 185 });

    // Run twice more, as a re-run by hand and the weekly cron would: still one query per planted error.
    for (let again = 0; again < 2; again++) {
      const rerun = await app.inject({ method: 'POST', url: '/api/iit/projects/demo-htn-01/qc-runs', headers: auth, payload: { skillId: 'demo-core-checks' } });
      const p = await waitFor(() => progressOf(rerun.json().id), 'the re-run to leave running', 90_000, 250);
      expect(p).toMatchObject({ status: 'waiting_review', suspended: 15 });
    }

    const queries = (await app.inject({ method: 'GET', url: '/api/iit/projects/demo-htn-01/queries', headers: auth })).json().queries;
    const planted = JSON.parse(demo('planted-errors.json').toString('utf8')) as Array<{ recordId: string; eventName: string; field: string; kind: string }>;
    expect(queries.map((q: { recordId: string; field: string }) => `${q.recordId} ${q.field}`).sort()).toEqual(planted.map((e) => `${e.recordId} ${e.eventName}.${e.field}`).sort());
    expect(queries.every((q: { status: string }) => q.status === 'held')).toBe(true);
    // Each query names the visit its field belongs to, and carries the value the rule read from that cell.
    expect(queries.every((q: { eventName: string; field: string }) => q.field.startsWith(`${q.eventName}.`))).toBe(true);
    for (const error of planted) {
      const query = queries.find((q: { recordId: string; field: string }) => q.recordId === error.recordId && q.field === `${error.eventName}.${error.field}`);
      const record = (await app.inject({ method: 'GET', url: `/api/iit/projects/demo-htn-01/records/${error.recordId}`, headers: auth })).json();
      const cell = record.events.find((e: { eventName: string }) => e.eventName === error.eventName)?.data[error.field] ?? null;
      expect({ query: `${error.recordId} ${error.field}`, value: query.value }).toEqual({ query: `${error.recordId} ${error.field}`, value: cell });
      if (error.kind !== 'missing_required') expect(query.value, `${error.recordId} ${error.field}`).not.toBeNull();
    }

    const review = (await app.inject({ method: 'GET', url: '/api/iit/projects/demo-htn-01/task-runs?status=SUSPENDED', headers: auth })).json().taskRuns;
    // One waiting review per record and skill: each re-run took over the older run's item (issue 32: the queue grew
    // by 15 on every run, 45 after three).
    expect(review).toHaveLength(15);
    const report = (await app.inject({ method: 'GET', url: '/api/iit/projects/demo-htn-01/report', headers: auth })).json();
    expect(report.total).toBe(15);
    const csv = (await app.inject({ method: 'GET', url: '/api/iit/projects/demo-htn-01/report?format=csv', headers: auth })).body;
    expect(csv).toContain(',"79",'); // S037's age, in the value column (every cell quoted)
    expect(report.bySeverity).toEqual([{ key: 'warning', count: 9 }, { key: 'error', count: 6 }]);
    const xlsx = await app.inject({ method: 'GET', url: '/api/iit/projects/demo-htn-01/report?format=xlsx', headers: auth });
    expect(xlsx.headers['content-type']).toContain('spreadsheetml');
    expect(xlsx.rawPayload.subarray(0, 2).toString()).toBe('PK');
  }, 300_000);

  it('schedules cron skills with pg-boss and starts a run of the skill when the schedule fires', async () => {
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    const schedules = await ctx.jobs!.schedules();
    expect(schedules.filter((s) => s.queue.startsWith('qc-'))).toEqual([{ queue: 'qc-cron-demo-core-checks', cron: '0 6 * * 1', data: { skillId: 'demo-core-checks' }, tz: 'UTC' }]);
    // Project memory's daily distillation and weekly reports run on the same scheduler.
    expect(schedules.map((s) => [s.queue, s.cron])).toEqual(expect.arrayContaining([['memory-distill-all', '0 2 * * *'], ['memory-weekly-all', '0 3 * * 1']]));
    // What the pg-boss clock sends when the schedule fires:
    await ctx.jobs!.send(cronQueue('demo-core-checks'), { skillId: 'demo-core-checks' });
    const admin = await ctx.users.create({ name: 'cron-watcher', role: 'admin' });
    const auth = { authorization: `Bearer ${admin.token}` };
    const cronRun = await waitFor(async () => {
      const runs = (await app.inject({ method: 'GET', url: '/api/iit/projects/demo-htn-01/qc-runs', headers: auth })).json().qcRuns as Array<{ trigger: string; createdBy: string; total: number }>;
      return runs.find((r) => r.trigger === 'cron');
    }, 'the run the cron job started', 30_000, 250);
    expect(cronRun).toMatchObject({ trigger: 'cron', createdBy: 'cron', total: 200 });
  }, 60_000);

  it('leaves REDCap sync to the PI or an admin (per-project settings are tested in trial-redcap.test.ts)', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/iit/projects/trial-a/redcap-sync', headers: member });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('offers no route to edit or delete the audit trail', () => {
    const auditWrites = app.routeTable.filter((r) => r.url.includes('audit') && r.method !== 'GET');
    expect(auditWrites).toEqual([]);
  });
});
