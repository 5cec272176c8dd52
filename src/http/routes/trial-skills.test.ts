import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../core/audit/audit-log.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { importRedcapCsv } from '../../trial/import/import-redcap-csv.js';
import { listQueries } from '../../trial/queries.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { registerWorkers } from '../../workers.js';
import { buildServer } from '../server.js';

const DICTIONARY = [
  'Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?,Custom Alignment,Question Number (surveys only),Matrix Group Name,Matrix Ranking?,Field Annotation',
  'record_id,enrolment,,text,Subject ID,,,,,,,,,,,,,',
  'age,enrolment,,text,Age,,,integer,,,,,y,,,,,',
  'weight,visit,,text,Weight,,,number,,,,,,,,,,',
].join('\n');
const EVENTS = 'event_name,label,day_offset,window_before,window_after\nv1_arm_1,V1 Baseline,0,0,0\nv2_arm_1,V2 Week 4,28,3,3\n';
const RECORDS = ['record_id,redcap_event_name,age,weight', 'S1,v1_arm_1,40,95', 'S1,v2_arm_1,,130', 'S2,v1_arm_1,50,70', 'S2,v2_arm_1,,72'].join('\n');

// A skill a data manager writes in the editor: the comment must come back as written.
const weightSkill = (max: number, field = 'weight') => `# Weight plausibility (protocol 6.2)
id: weights
name: Weights
projects: [p1]
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: weight-max, field: v2_arm_1.weight, logic: { "<=": [{ var: v2_arm_1.${field} }, ${max}] }, message: "Weight above ${max} kg at V2" }
    on_pass: end_ok
    on_fail: end_flagged
`;
const GLOBAL = 'id: for-all\nname: For all\nstart_node: hard\nnodes:\n  hard:\n    type: hard_rule\n    rules:\n      - { id: a, field: age, logic: { ">=": [{ var: age }, 0] }, message: "Age" }\n    on_pass: end_ok\n    on_fail: end_flagged\n';

describe.each(testEngines())('skills written, validated and activated through the API, on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let workers: { stop(): void };
  let skillsDir: string;
  const auth: Record<'admin' | 'dm' | 'viewer' | 'otherDm', { authorization: string }> = {} as never;
  const call = (who: keyof typeof auth, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => app.inject({ method, url, headers: auth[who], ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-api-skills-'));
    writeFileSync(path.join(skillsDir, 'for-all.yaml'), GLOBAL);
    ctx = await buildTestContext({ engine, startJobs: true, env: { SKILLS_DIR: skillsDir } });
    app = await buildServer(ctx, { serveConsole: false });
    workers = await registerWorkers(ctx);
    await ctx.users.createProject({ id: 'p1', name: 'P1' });
    await ctx.users.createProject({ id: 'p2', name: 'P2' });
    await importRedcapCsv(createTrialStore(ctx.db), 'p1', { dictionaryCsv: DICTIONARY, eventsCsv: EVENTS, recordsCsv: RECORDS }, 'test');
    const make = async (name: string, role: 'admin' | 'coordinator' | 'viewer', project?: string) => {
      const created = await ctx.users.create({ name, role });
      if (project) await ctx.users.addMember(project, created.user.id);
      return { authorization: `Bearer ${created.token}` };
    };
    auth.admin = await make('admin', 'admin');
    auth.dm = await make('dm', 'coordinator', 'p1');
    auth.viewer = await make('viewer', 'viewer', 'p1');
    auth.otherDm = await make('other-dm', 'coordinator', 'p2');
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
    if (skillsDir) rmSync(skillsDir, { recursive: true, force: true });
  });

  it('creates a draft for the writer\'s project, listing a misspelt field with its suggestion; a second create is 409', async () => {
    const created = await call('dm', 'POST', '/api/iit/skills', { yaml: weightSkill(120, 'wieght'), comment: 'first try' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ skillId: 'weights', version: 1, status: 'draft', createdBy: 'dm', comment: 'first try', yaml: expect.stringContaining('# Weight plausibility') });
    expect(created.json().validation).toEqual({
      valid: false,
      problems: [{ path: 'nodes.hard.rules[0].logic["<="][0].var', message: 'rule "weight-max" (node hard) reads unknown field "wieght" of event "v2_arm_1"; did you mean "weight"?', suggestion: 'weight', word: 'wieght' }],
      notes: [],
    });
    const again = await call('dm', 'POST', '/api/iit/skills', { yaml: weightSkill(120) });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toContain('A skill with id "weights" already exists');
  });

  it('refuses to activate a draft with problems (422 naming each), and validates without writing', async () => {
    const refused = await call('dm', 'POST', '/api/iit/skills/weights/activate', {});
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ code: 'SKILL_INVALID', details: { problems: [expect.objectContaining({ suggestion: 'weight' })] } });
    expect(refused.json().message).toContain('unknown field "wieght"');
    // Checking a draft is part of writing one: writers may, viewers (who read skills) may not.
    expect((await call('viewer', 'POST', '/api/iit/skills/validate', { yaml: weightSkill(120), projectId: 'p1' })).statusCode).toBe(403);
    const checked = await call('dm', 'POST', '/api/iit/skills/validate', { yaml: weightSkill(120).replace('v2_arm_1.weight }', 'v2_arn_1.weight }'), projectId: 'p1' });
    expect(checked.json()).toMatchObject({ valid: false, problems: [expect.objectContaining({ suggestion: 'v2_arm_1', word: 'v2_arn_1' })] });
    expect((await call('dm', 'GET', '/api/iit/skills/weights/versions')).json().versions).toHaveLength(1);
  });

  it('keeps viewers and other trials\' writers out', async () => {
    expect((await call('viewer', 'GET', '/api/iit/skills/weights')).statusCode).toBe(200);
    const viewerDraft = await call('viewer', 'PUT', '/api/iit/skills/weights/draft', { yaml: weightSkill(120) });
    expect(viewerDraft.statusCode).toBe(403);
    for (const [method, url] of [['GET', '/api/iit/skills/weights'], ['PUT', '/api/iit/skills/weights/draft'], ['POST', '/api/iit/skills/weights/activate']] as const) {
      const response = await call('otherDm', method, url, method === 'PUT' ? { yaml: weightSkill(120) } : method === 'POST' ? {} : undefined);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json().message).toContain('does not exist or belongs to a trial you are not in');
    }
    const intoP1 = await call('otherDm', 'POST', '/api/iit/skills', { yaml: weightSkill(120).replace('id: weights', 'id: mine') });
    expect(intoP1.statusCode).toBe(403);
    expect(intoP1.json().message).toContain('"p1" is not one of yours');
    const global = await call('dm', 'PUT', '/api/iit/skills/for-all/draft', { yaml: GLOBAL });
    expect(global.statusCode).toBe(403);
    expect(global.json().message).toContain('only admins change such skills');
    expect((await call('otherDm', 'POST', '/api/iit/skills/validate', { yaml: weightSkill(1), projectId: 'p1' })).statusCode).toBe(404);
    expect((await call('dm', 'GET', '/api/iit/skills/nope/versions/1')).statusCode).toBe(404);
    expect((await call('dm', 'PUT', '/api/iit/skills/weights/draft', { yaml: weightSkill(1).replace('id: weights', 'id: renamed') })).statusCode).toBe(400);
  });

  it('activates a fixed draft without a restart: a QC run started after it uses the new rule, audited in the trial', async () => {
    const saved = await call('dm', 'PUT', '/api/iit/skills/weights/draft', { yaml: weightSkill(120), comment: 'fixed the field' });
    expect(saved.json()).toMatchObject({ version: 2, status: 'draft', validation: { valid: true, problems: [] } });
    const activated = await call('dm', 'POST', '/api/iit/skills/weights/activate', { comment: 'go live' });
    expect(activated.statusCode, activated.body).toBe(200);
    expect(activated.json()).toMatchObject({ activated: { version: 2, status: 'active', activatedBy: 'dm' }, retiredVersion: null });

    const listed = (await call('dm', 'GET', '/api/iit/skills')).json().skills;
    expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'weights', status: 'active', version: 2, updatedBy: 'dm', draftVersion: null, projects: ['p1'] })]));
    expect((await call('otherDm', 'GET', '/api/iit/skills')).json().skills.map((s: { id: string }) => s.id)).toEqual(['for-all']);

    const runAndWait = async () => {
      const started = await call('dm', 'POST', '/api/iit/projects/p1/qc-runs', { skillId: 'weights' });
      expect(started.statusCode, started.body).toBe(202);
      await waitFor(async () => ((await call('dm', 'GET', `/api/iit/qc-runs/${started.json().id}`)).json().status === 'completed' ? true : undefined), 'the QC run to complete');
    };
    await runAndWait();
    const open = async () => (await listQueries(ctx.db, { projectId: 'p1' })).filter((q) => q.status === 'open').map((q) => `${q.recordId}:${q.ruleId}`);
    expect(await open()).toEqual(['S1:weight-max']);

    // A stricter rule, activated: the next run flags S2 too.
    await call('dm', 'PUT', '/api/iit/skills/weights/draft', { yaml: weightSkill(70) });
    expect((await call('dm', 'POST', '/api/iit/skills/weights/activate', {})).json()).toMatchObject({ activated: { version: 3 }, retiredVersion: 2 });
    await runAndWait();
    expect((await open()).sort()).toEqual(['S1:weight-max', 'S2:weight-max']);

    const detail = (await call('viewer', 'GET', '/api/iit/skills/weights')).json();
    expect(detail).toMatchObject({ skillId: 'weights', active: { version: 3, yaml: expect.stringContaining('# Weight plausibility') }, draft: null });
    expect((await call('viewer', 'GET', '/api/iit/skills/weights/versions/1')).json()).toMatchObject({ version: 1, status: 'draft' });
    const audit = await listAudit(ctx.db, 'p1', { entityType: 'skill', entityId: 'weights' });
    expect(audit.map((e) => [e.action, e.actor])).toEqual([['draft_saved', 'dm'], ['draft_saved', 'dm'], ['activated', 'dm'], ['draft_saved', 'dm'], ['activated', 'dm']]);
    expect(audit[2]!.reason).toBe('go live');
  });
});
