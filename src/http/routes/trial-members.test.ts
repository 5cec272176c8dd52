import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, ProjectMember } from '../../contract/index.js';
import { buildTestContext } from '../../testing/test-context.js';
import { buildServer } from '../server.js';

/**
 * The members panel's routes (issue 25: "The console cannot create users or add them to a trial; a coordinator's
 * access to identifier fields is set there too"): list, add, remove and the identifier toggle, who may call them,
 * their audit entries and their errors.
 */
const PROJECT = 'members-http';
const OTHER = 'members-other';

describe('trial members over HTTP', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  const auth: Record<'admin' | 'pi' | 'coordinator' | 'outsider', { authorization: string }> = {} as never;
  const ids: Record<'admin' | 'pi' | 'coordinator' | 'outsider' | 'newcomer', string> = {} as never;

  beforeAll(async () => {
    ctx = await buildTestContext();
    app = await buildServer(ctx, { serveConsole: false });
    for (const id of [PROJECT, OTHER]) await ctx.users.createProject({ id, name: id });
    for (const [who, role] of [['admin', 'admin'], ['pi', 'pi'], ['coordinator', 'coordinator'], ['outsider', 'pi'], ['newcomer', 'coordinator']] as const) {
      const made = await ctx.users.create({ name: `m-${who}`, role });
      ids[who] = made.user.id;
      if (who !== 'newcomer') auth[who as keyof typeof auth] = { authorization: `Bearer ${made.token}` };
    }
    await ctx.users.addMember(PROJECT, ids.pi);
    await ctx.users.addMember(PROJECT, ids.coordinator);
    await ctx.users.addMember(OTHER, ids.outsider);
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const members = (who: keyof typeof auth = 'admin', projectId = PROJECT) => app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/members`, headers: auth[who] });
  const add = (payload: object, who: keyof typeof auth = 'admin', projectId = PROJECT) => app.inject({ method: 'POST', url: `/api/iit/projects/${projectId}/members`, headers: auth[who], payload });
  const remove = (userId: string, who: keyof typeof auth = 'admin', projectId = PROJECT) => app.inject({ method: 'DELETE', url: `/api/iit/projects/${projectId}/members/${userId}`, headers: auth[who] });
  const toggle = (userId: string, canViewIdentifiers: unknown, who: keyof typeof auth = 'admin') => app.inject({ method: 'PATCH', url: `/api/projects/${PROJECT}/members/${userId}`, headers: auth[who], payload: { canViewIdentifiers } });
  const memberAudit = async () => {
    const response = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/audit?entityType=member`, headers: auth.admin });
    return (response.json() as { entries: AuditEntry[] }).entries;
  };

  it('lists members by name with role and what they see, to admins and the trial PI', async () => {
    const response = await members();
    expect(response.statusCode).toBe(200);
    const list = (response.json() as { members: ProjectMember[] }).members;
    expect(list.map((m) => [m.name, m.role, m.canViewIdentifiers, m.seesIdentifiers])).toEqual([
      ['m-coordinator', 'coordinator', false, false],
      ['m-pi', 'pi', false, true],
    ]);
    expect(list[0]).toMatchObject({ userId: ids.coordinator, deactivatedAt: null, addedAt: expect.any(String) });
    expect((await members('pi')).statusCode).toBe(200);
  });

  it('refuses the list to a coordinator (403) and to a PI of another trial as if the trial did not exist (404)', async () => {
    expect((await members('coordinator')).json()).toMatchObject({ code: 'FORBIDDEN' });
    expect((await members('coordinator')).statusCode).toBe(403);
    expect((await members('outsider')).statusCode).toBe(404);
    expect((await members('admin', 'no-such-trial')).statusCode).toBe(404);
  });

  it('adds a user with their role, audited, and answers 409 when they already are a member', async () => {
    const response = await add({ userId: ids.newcomer, role: 'coordinator' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ userId: ids.newcomer, name: 'm-newcomer', role: 'coordinator', canViewIdentifiers: false, seesIdentifiers: false });
    const added = (await memberAudit()).filter((e) => e.action === 'member.add' && e.entityId === ids.newcomer);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ actor: 'm-admin', newValue: { userId: ids.newcomer, userName: 'm-newcomer', role: 'coordinator' } });

    const again = await add({ userId: ids.newcomer });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toContain('already a member');
    expect((await memberAudit()).filter((e) => e.action === 'member.add' && e.entityId === ids.newcomer)).toHaveLength(1);
  });

  it('answers 404 for an unknown user or trial, 400 naming the roles a trial takes for a bad role or admin', async () => {
    const unknown = await add({ userId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toContain('GET /api/users');
    expect((await add({ userId: 'not-a-uuid' })).statusCode).toBe(404);
    expect((await add({ userId: ids.outsider }, 'admin', 'no-such-trial')).statusCode).toBe(404);

    const badRole = await add({ userId: ids.outsider, role: 'monitor' });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.json()).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('pi, data_manager, coordinator, viewer'), details: { field: 'role' } });
    const admin = await add({ userId: ids.outsider, role: 'admin' });
    expect(admin.statusCode).toBe(400);
    expect(admin.json().message).toContain('Admin applies on the whole platform');
    expect((await add({})).statusCode).toBe(400);
    expect((await members()).json().members.map((m: ProjectMember) => m.name)).not.toContain('m-outsider');
  });

  it('lets only admins add and remove members', async () => {
    expect((await add({ userId: ids.outsider }, 'pi')).statusCode).toBe(403);
    expect((await remove(ids.coordinator, 'pi')).statusCode).toBe(403);
    expect((await toggle(ids.coordinator, true, 'pi')).statusCode).toBe(403);
  });

  it('toggles identifier access, audited, and shows it in the list', async () => {
    expect((await toggle(ids.coordinator, true)).statusCode).toBe(200);
    const list = (await members()).json() as { members: ProjectMember[] };
    expect(list.members.find((m) => m.userId === ids.coordinator)).toMatchObject({ canViewIdentifiers: true, seesIdentifiers: true });
    expect((await toggle(ids.coordinator, 'yes')).statusCode).toBe(400);
    const granted = (await memberAudit()).filter((e) => e.action === 'member.identifiers_granted' && e.entityId === ids.coordinator);
    expect(granted).toHaveLength(1);
  });

  it("removes a member, audited with their grant, ending their access at once; removing again is 404", async () => {
    const before = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/records`, headers: auth.coordinator });
    expect(before.statusCode).toBe(200);
    const response = await remove(ids.coordinator);
    expect(response.statusCode, response.body).toBe(204);
    const after = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/records`, headers: auth.coordinator });
    expect(after.statusCode).toBe(404);
    const removed = (await memberAudit()).filter((e) => e.action === 'member.remove');
    expect(removed).toHaveLength(1);
    expect(removed[0]).toMatchObject({ entityId: ids.coordinator, actor: 'm-admin', oldValue: { userName: 'm-coordinator', role: 'coordinator', canViewIdentifiers: true } });
    expect((await members()).json().members.map((m: ProjectMember) => m.name)).not.toContain('m-coordinator');

    expect((await remove(ids.coordinator)).statusCode).toBe(404);
    expect((await remove('not-a-uuid')).statusCode).toBe(404);
  });
});
