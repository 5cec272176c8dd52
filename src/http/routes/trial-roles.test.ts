import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, ProjectMember } from '../../contract/index.js';
import { hardRuleSkillYaml } from '../../testing/skill-yaml.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import type { TrialField } from '../../trial/store/types.js';
import { buildServer } from '../server.js';

/**
 * A role per trial: the last note left roles platform-wide, so adding a coordinator of one trial as a viewer of
 * another was refused. Here each member's rights are tried in both directions, as the people of a hospital with two
 * trials would meet them: a coordinator who only reads in the second trial, a platform viewer who coordinates one
 * trial, a PI who is a coordinator elsewhere (and must not see that trial's identifiers).
 */
const A = 'roles-a';
const B = 'roles-b';
const PHONE = '13800138000';

const field = (fieldName: string, fieldType: TrialField['fieldType'] = 'text'): TrialField => ({ fieldName, formName: 'enrolment', fieldType, label: fieldName, choices: [], validationMin: null, validationMax: null, required: false });

describe.each(testEngines())('roles per trial on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  const auth: Record<'admin' | 'alice' | 'victor' | 'paula', { authorization: string }> = {} as never;
  const ids: Record<'alice' | 'victor' | 'paula', string> = {} as never;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    const store = createTrialStore(ctx.db);
    for (const id of [A, B]) {
      await ctx.users.createProject({ id, name: id });
      await store.replaceDictionary(id, [field('record_id'), field('phone'), field('age', 'integer')], 'test');
      await ctx.db.execute(sql`UPDATE trial_fields SET identifier = true WHERE project_id = ${id} AND field_name = 'phone'`);
      await store.importRecords(id, [{ recordId: 'S001', eventName: '', site: 'SITE-01', data: { record_id: 'S001', phone: PHONE, age: 40 } }], { actor: 'site' });
    }
    const admin = await ctx.users.create({ name: 'r-admin', role: 'admin' });
    auth.admin = { authorization: `Bearer ${admin.token}` };
    for (const [who, role] of [['alice', 'coordinator'], ['victor', 'viewer'], ['paula', 'pi']] as const) {
      const made = await ctx.users.create({ name: `r-${who}`, role });
      ids[who] = made.user.id;
      auth[who] = { authorization: `Bearer ${made.token}` };
    }
    // As an admin sets them up on the Members tab.
    for (const [projectId, who, role] of [[A, 'alice', undefined], [B, 'alice', 'viewer'], [A, 'victor', 'coordinator'], [B, 'victor', undefined], [A, 'paula', 'coordinator'], [B, 'paula', undefined]] as const) {
      const added = await app.inject({ method: 'POST', url: `/api/iit/projects/${projectId}/members`, headers: auth.admin, payload: { userId: ids[who], ...(role ? { role } : {}) } });
      expect(added.statusCode, added.body).toBe(201);
    }
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const remember = (who: keyof typeof auth, projectId: string) =>
    app.inject({ method: 'POST', url: `/api/iit/projects/${projectId}/memory/facts`, headers: auth[who], payload: { facts: [{ section: 'state', text: `${who} was here.` }] } });
  const members = async (projectId: string) => (await app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/members`, headers: auth.admin })).json<{ members: ProjectMember[] }>().members;
  const setRole = (projectId: string, userId: string, role: unknown, who: keyof typeof auth = 'admin') =>
    app.inject({ method: 'PATCH', url: `/api/projects/${projectId}/members/${userId}`, headers: auth[who], payload: { role } });

  it('lists each member with the role they have in the trial, their platform role, and the trial role set', async () => {
    const inA = await members(A);
    expect(inA.map((m) => [m.name, m.role, m.platformRole, m.projectRole])).toEqual([
      ['r-alice', 'coordinator', 'coordinator', null],
      ['r-paula', 'coordinator', 'pi', 'coordinator'],
      ['r-victor', 'coordinator', 'viewer', 'coordinator'],
    ]);
    expect((await members(B)).map((m) => [m.name, m.role])).toEqual([['r-alice', 'viewer'], ['r-paula', 'pi'], ['r-victor', 'viewer']]);
    const audit = (await app.inject({ method: 'GET', url: `/api/iit/projects/${B}/audit?entityType=member`, headers: auth.admin })).json<{ entries: AuditEntry[] }>().entries;
    expect(audit.find((e) => e.entityId === ids.alice && e.action === 'member.add')).toMatchObject({ newValue: { role: 'viewer', projectRole: 'viewer' } });
    // Each member's projects list carries their role there, which the console offers its buttons by.
    const projects = (await app.inject({ method: 'GET', url: '/api/iit/projects', headers: auth.victor })).json<{ projects: Array<{ id: string; role: string }> }>().projects;
    expect(projects.map((p) => [p.id, p.role]).sort()).toEqual([[A, 'coordinator'], [B, 'viewer']]);
  });

  it('lets each write where their trial role allows and nowhere else, on routes named by trial and by skill', async () => {
    expect((await remember('alice', A)).statusCode).toBe(200);
    const narrowed = await remember('alice', B);
    expect(narrowed.statusCode).toBe(403);
    expect(narrowed.json().message).toContain(`Your role "viewer" can only read in project "${B}"`);
    expect((await remember('victor', A)).statusCode).toBe(200);
    expect((await remember('victor', B)).statusCode).toBe(403);

    // A skill route names no trial: the route lets a writer of any trial in, the library checks the skill's trials.
    const create = (who: keyof typeof auth, id: string, projectId: string) =>
      app.inject({ method: 'POST', url: '/api/iit/skills', headers: auth[who], payload: { yaml: `${hardRuleSkillYaml(id, ['{ id: age-set, field: age, logic: { "!!": [{ var: age }] }, message: "Age is missing" }'])}projects: [${projectId}]\n` } });
    expect((await create('victor', 'roles-victor-a', A)).statusCode).toBe(201);
    const victorB = await create('victor', 'roles-victor-b', B);
    expect(victorB.statusCode, victorB.body).toBe(403);
    expect(victorB.json().message).toContain('is viewer, which can only read');
    expect((await create('alice', 'roles-alice-b', B)).statusCode).toBe(403);
    // A skill of both trials, made by an admin: alice, a viewer in B, may neither change it nor take it away from B.
    const shared = (projects: string) => `${hardRuleSkillYaml('roles-shared', ['{ id: age-set, field: age, logic: { "!!": [{ var: age }] }, message: "Age is missing" }'])}projects: [${projects}]\n`;
    expect((await app.inject({ method: 'POST', url: '/api/iit/skills', headers: auth.admin, payload: { yaml: shared(`${A}, ${B}`) } })).statusCode).toBe(201);
    const takeAway = await app.inject({ method: 'PUT', url: '/api/iit/skills/roles-shared/draft', headers: auth.alice, payload: { yaml: shared(A) } });
    expect(takeAway.statusCode, takeAway.body).toBe(403);
    expect(takeAway.json().message).toContain(`"${B}" is viewer`);
  });

  it('shows identifier values by the role in the trial: a PI who coordinates another trial sees them masked there', async () => {
    const record = async (who: keyof typeof auth, projectId: string) => (await app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/records/S001`, headers: auth[who] })).json<{ events: Array<{ data: Record<string, unknown> }> }>().events[0]!.data;
    expect((await record('paula', B)).phone).toBe(PHONE);
    expect((await record('paula', A)).phone).toBeNull();
    // And the members list is the PI's in B only.
    expect((await app.inject({ method: 'GET', url: `/api/iit/projects/${B}/members`, headers: auth.paula })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/api/iit/projects/${A}/members`, headers: auth.paula })).statusCode).toBe(403);
  });

  it('refuses every change route of a trial to a coordinator who is a viewer there, and writes nothing to it', async () => {
    const trail = async () => (await app.inject({ method: 'GET', url: `/api/iit/projects/${B}/audit`, headers: auth.admin })).json<{ entries: AuditEntry[] }>().entries.length;
    const before = await trail();
    // A body each route accepts, so the refusal comes from the role check and not from validation.
    const bodies: Record<string, object> = {
      'PUT /api/iit/projects/:projectId/memory': { content: '## Current state\n- changed by a viewer' },
      'POST /api/iit/projects/:projectId/memory/rollback': { version: 1 },
      'POST /api/iit/projects/:projectId/memory/facts': { facts: [{ section: 'state', text: 'Written by a viewer.' }] },
      'POST /api/iit/projects/:projectId/reports/regenerate': { weekStart: '2026-11-16' },
      'POST /api/iit/projects/:projectId/queries/bulk-close': { queryIds: ['00000000-0000-4000-8000-000000000000'], reason: 'no change needed' },
      'POST /api/iit/projects/:projectId/queries/:id/transition': { to: 'closed', comment: 'closed by a viewer' },
      'POST /api/iit/projects/:projectId/qc-runs': { skillId: 'roles-victor-a' },
      'POST /api/iit/projects/:projectId/skills/import-redcap-rules': { rules: [{ name: 'Adult', logic: '[age] < 18' }], skillId: 'roles-imported', name: 'Imported' },
    };
    const routes = app.routeTable.filter((route) => route.method !== 'GET' && route.method !== 'HEAD' && route.url.includes(':projectId') && route.access !== 'self');
    expect(routes.length).toBeGreaterThan(15);
    for (const route of routes) {
      const url = route.url.replace(':projectId', B).replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      const response = await app.inject({ method: route.method as 'POST', url, headers: auth.alice, payload: bodies[`${route.method} ${route.url}`] ?? {} });
      if (bodies[`${route.method} ${route.url}`]) expect(response.statusCode, `${route.method} ${url}: ${response.body.slice(0, 200)}`).toBe(403);
      expect(response.statusCode, `${route.method} ${url}: ${response.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, `${route.method} ${url}: ${response.body.slice(0, 200)}`).toBeLessThan(500);
    }
    expect(await trail()).toBe(before);
  });

  it("changes a member's trial role or hands them back to their platform role, audited, taking effect at once", async () => {
    const changed = await setRole(B, ids.alice, 'coordinator');
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ role: 'coordinator', projectRole: 'coordinator', canViewIdentifiers: false });
    expect((await remember('alice', B)).statusCode).toBe(200);
    const back = await setRole(A, ids.paula, null);
    expect(back.json()).toMatchObject({ role: 'pi', projectRole: null });
    expect((await app.inject({ method: 'GET', url: `/api/iit/projects/${A}/records/S001`, headers: auth.paula })).body).toContain(PHONE);
    const audit = (await app.inject({ method: 'GET', url: `/api/iit/projects/${A}/audit?entityType=member`, headers: auth.admin })).json<{ entries: AuditEntry[] }>().entries;
    expect(audit.find((e) => e.action === 'member.role_changed')).toMatchObject({ entityId: ids.paula, actor: 'r-admin', oldValue: { role: 'coordinator', projectRole: 'coordinator' }, newValue: { role: 'pi', projectRole: null } });
    // The same role again changes and records nothing.
    expect((await setRole(A, ids.paula, null)).statusCode).toBe(200);
    const again = (await app.inject({ method: 'GET', url: `/api/iit/projects/${A}/audit?entityType=member`, headers: auth.admin })).json<{ entries: AuditEntry[] }>().entries;
    expect(again.filter((e) => e.action === 'member.role_changed')).toHaveLength(1);
  });

  it('refuses a member who raises their own role, admin as a trial role, a non-member and an empty change', async () => {
    expect((await setRole(B, ids.victor, 'pi', 'victor')).statusCode).toBe(403);
    expect((await setRole(A, ids.victor, 'pi', 'paula')).statusCode).toBe(403);
    const admin = await setRole(A, ids.victor, 'admin');
    expect(admin.statusCode).toBe(400);
    expect(admin.json().message).toContain('PATCH /api/users/:id');
    expect((await setRole(A, '00000000-0000-4000-8000-000000000000', 'viewer')).statusCode).toBe(404);
    expect((await setRole('no-such-trial', ids.victor, 'viewer')).statusCode).toBe(404);
    const empty = await app.inject({ method: 'PATCH', url: `/api/projects/${A}/members/${ids.victor}`, headers: auth.admin, payload: {} });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toContain('Send "role"');
    expect((await members(A)).find((m) => m.userId === ids.victor)).toMatchObject({ role: 'coordinator', projectRole: 'coordinator' });
  });
});
