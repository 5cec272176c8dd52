import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { importRedcapCsv } from '../../trial/import/import-redcap-csv.js';
import { listQueries } from '../../trial/queries.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { registerWorkers } from '../../workers.js';
import { buildServer } from '../server.js';

// A rule on a first-visit field as a new user writes it (`age`, read at the top level) and one on a later visit.
const GOOD = `
id: ranges
name: Ranges
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: adult, field: age, logic: { ">=": [{ var: age }, 18] }, message: "Age must be 18 or over" }
      - { id: sbp-v2, field: v2_arm_1.sbp, logic: { "<=": [{ var: v2_arm_1.sbp }, 200] }, message: "SBP above 200 at V2" }
    on_pass: end_ok
    on_fail: end_flagged
`;
const BAD = GOOD.replace('id: ranges', 'id: bounds').replace('">=": [{ var: age }, 18]', 'between: [{ var: age }, 18, 75]');

const DICTIONARY = [
  'Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?,Custom Alignment,Question Number (surveys only),Matrix Group Name,Matrix Ranking?,Field Annotation',
  'record_id,enrolment,,text,Subject ID,,,,,,,,,,,,,',
  'age,enrolment,,text,Age,,,integer,,,,,y,,,,,',
  'sbp,visit,,text,Systolic BP,,,integer,,,,,,,,,,',
].join('\n');
const EVENTS = 'event_name,label,day_offset,window_before,window_after\nv1_arm_1,V1 Baseline,0,0,0\nv2_arm_1,V2 Week 4,28,3,3\n';
const RECORDS = [
  'record_id,redcap_event_name,redcap_data_access_group,age,sbp',
  'S1,v1_arm_1,site_a,16,120',
  'S1,v2_arm_1,site_a,,210',
  'S2,v1_arm_1,site_b,40,118',
  'S2,v2_arm_1,site_b,,125',
].join('\n');

describe.each(testEngines())('skills folder with an invalid file, on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let workers: { stop(): void };
  let skillsDir: string;
  const logLines: Array<Record<string, unknown>> = [];
  const auth: Record<'admin' | 'dm', { authorization: string }> = {} as never;

  beforeAll(async () => {
    skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-invalid-skills-'));
    writeFileSync(path.join(skillsDir, 'bounds.yaml'), BAD);
    writeFileSync(path.join(skillsDir, 'ranges.yaml'), GOOD);
    const sink = { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) };
    ctx = await buildTestContext({ engine, startJobs: true, env: { SKILLS_DIR: skillsDir }, logger: createLogger('error', sink) });
    app = await buildServer(ctx, { serveConsole: false });
    workers = await registerWorkers(ctx);
    await ctx.users.createProject({ id: 'long', name: 'Longitudinal' });
    await importRedcapCsv(createTrialStore(ctx.db), 'long', { dictionaryCsv: DICTIONARY, eventsCsv: EVENTS, recordsCsv: RECORDS }, 'test');
    const admin = await ctx.users.create({ name: 'admin', role: 'admin' });
    const dm = await ctx.users.create({ name: 'dm', role: 'coordinator' });
    await ctx.users.addMember('long', dm.user.id);
    auth.admin = { authorization: `Bearer ${admin.token}` };
    auth.dm = { authorization: `Bearer ${dm.token}` };
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
    if (skillsDir) rmSync(skillsDir, { recursive: true, force: true });
  });

  it('starts, logs the bad file with its problem, and lists it as invalid to admins only', async () => {
    const logged = logLines.find((line) => line.file === path.join(skillsDir, 'bounds.yaml'));
    expect(logged).toMatchObject({ level: 50, skillId: 'bounds' });
    expect(logged!.msg).toContain('unknown operator "between"');

    const ofAdmin = (await app.inject({ method: 'GET', url: '/api/iit/skills', headers: auth.admin })).json().skills;
    expect(ofAdmin).toEqual([
      expect.objectContaining({ id: 'ranges', status: 'active', problems: [], file: 'ranges.yaml' }),
      expect.objectContaining({ id: 'bounds', status: 'invalid', file: 'bounds.yaml', problems: [expect.stringContaining('unknown operator "between"')] }),
    ]);
    const ofMember = await app.inject({ method: 'GET', url: '/api/iit/skills', headers: auth.dm });
    expect(ofMember.json().skills.map((s: { id: string }) => s.id)).toEqual(['ranges']);
  });

  it('refuses to start a run of the invalid skill, naming its problems', async () => {
    const refused = await app.inject({ method: 'POST', url: '/api/iit/projects/long/qc-runs', headers: auth.dm, payload: { skillId: 'bounds' } });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ code: 'SKILL_INVALID' });
    expect(refused.json().message).toContain('Skill "bounds" is inactive');
    expect(refused.json().message).toContain('unknown operator "between"');
  });

  it('runs the good skill, and a query on a first-visit field carries that visit and the record\'s site', async () => {
    const started = await app.inject({ method: 'POST', url: '/api/iit/projects/long/qc-runs', headers: auth.dm, payload: { skillId: 'ranges' } });
    expect(started.statusCode, started.body).toBe(202);
    await waitFor(async () => {
      const progress = (await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${started.json().id}`, headers: auth.dm })).json();
      return progress.status === 'completed' ? progress : undefined;
    }, 'the QC run to complete');

    const queries = await listQueries(ctx.db, { projectId: 'long' });
    expect(queries.map((q) => ({ record: q.recordId, rule: q.ruleId, event: q.eventName, site: q.site, value: q.value }))).toEqual(
      expect.arrayContaining([
        { record: 'S1', rule: 'adult', event: 'v1_arm_1', site: 'site_a', value: 16 },
        { record: 'S1', rule: 'sbp-v2', event: 'v2_arm_1', site: 'site_a', value: 210 },
      ]),
    );
    expect(queries).toHaveLength(2);
  });
});
