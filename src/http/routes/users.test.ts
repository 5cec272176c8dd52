import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import { apiTokens, users as usersTable } from '../../core/db/schema/auth.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { hashToken } from '../../core/auth/tokens.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

const ADMIN_TOKEN = 'admin-token-for-user-tests-0123456789';
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * User and token management through HTTP, as each role would attack it: expiry, revocation, role changes
 * and deactivation, the last-admin guard, and the audit entries each change leaves.
 */
describe.each(testEngines())('users and tokens on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let adminId: string;

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const as = (token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });
  /** Created as an admin does, then signed in once with the one-time link, as the new user does. */
  const newUser = async (name: string, role: 'admin' | 'pi' | 'coordinator' | 'viewer') => {
    const response = await as(ADMIN_TOKEN, 'POST', '/api/users', { name, role });
    expect(response.statusCode, response.body).toBe(201);
    const { user, signInLink } = response.json() as { user: { id: string; name: string }; signInLink: string };
    const code = new URL(signInLink).searchParams.get('login');
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { code } });
    expect(login.statusCode, login.body).toBe(200);
    return { user, token: login.json<{ token: string }>().token };
  };
  const platformAudit = async (entityId: string) =>
    (await ctx.db.select().from(auditLog).where(and(eq(auditLog.projectId, PLATFORM_AUDIT_SCOPE), eq(auditLog.entityId, entityId))).orderBy(auditLog.id)).map((e) => ({ action: e.action, actor: e.actor, entityType: e.entityType, oldValue: e.oldValue, newValue: e.newValue }));

  beforeAll(async () => {
    ctx = await buildTestContext({ engine, env: { TOKEN_TTL_DAYS: '7' } });
    app = await buildServer(ctx, { serveConsole: false });
    await app.ready();
    await ctx.users.bootstrapAdmin(ADMIN_TOKEN);
    adminId = (await ctx.users.list()).find((u) => u.role === 'admin')!.id;
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  it('gives user tokens TOKEN_TTL_DAYS days and the CLINAGENT_ADMIN_TOKEN none, and audits user and token creation', async () => {
    const before = Date.now();
    const { user } = await newUser('ttl-user', 'coordinator');

    const tokens = (await as(ADMIN_TOKEN, 'GET', `/api/users/${user.id}/tokens`)).json().tokens;
    expect(tokens).toHaveLength(1);
    const expiresInMs = Date.parse(tokens[0].expiresAt) - before;
    expect(expiresInMs).toBeGreaterThan(7 * DAY_MS - 60_000);
    expect(expiresInMs).toBeLessThan(7 * DAY_MS + 60_000);
    const adminTokens = (await as(ADMIN_TOKEN, 'GET', `/api/users/${adminId}/tokens`)).json().tokens;
    expect(adminTokens.find((t: { label: string }) => t.label === 'CLINAGENT_ADMIN_TOKEN')).toMatchObject({ expiresAt: null, revokedAt: null });

    const adminName = (await ctx.users.get(adminId))!.name;
    expect(await platformAudit(user.id)).toEqual([
      { action: 'created', actor: adminName, entityType: 'user', oldValue: null, newValue: { name: 'ttl-user', role: 'coordinator' } },
      { action: 'sign_in_link_issued', actor: adminName, entityType: 'user', oldValue: null, newValue: { userName: 'ttl-user', expiresAt: expect.any(String) } },
    ]);
    // The token is made when the user signs in with the link, by them: the admin never held it.
    expect(await platformAudit(tokens[0].id)).toEqual([expect.objectContaining({ action: 'issued', actor: 'ttl-user', entityType: 'token' })]);
  });

  it('answers 401 saying the token expired and how to get a new one', async () => {
    const { token } = await newUser('expiring-user', 'coordinator');
    expect((await as(token, 'GET', '/api/me')).statusCode).toBe(200);
    await ctx.db.update(apiTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(apiTokens.tokenHash, hashToken(token)));

    const response = await as(token, 'GET', '/api/me');

    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'expired' } });
    expect(response.json().message).toMatch(/expired at .*new sign-in link.*POST \/api\/users\/:id\/sign-in-link/);
  });

  it('records when a token was last used, at most once a minute', async () => {
    const { token } = await newUser('busy-user', 'viewer');
    const lastUsed = async () => (await ctx.db.select({ at: apiTokens.lastUsedAt }).from(apiTokens).where(eq(apiTokens.tokenHash, hashToken(token))))[0]!.at;
    expect(await lastUsed()).toBeNull();

    await as(token, 'GET', '/api/me');
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    await as(token, 'GET', '/api/me');
    await as(token, 'GET', '/api/projects');
    expect((await lastUsed())!.getTime()).toBe(first!.getTime());

    // A minute later the next request moves it forward.
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await ctx.db.update(apiTokens).set({ lastUsedAt: twoMinutesAgo }).where(eq(apiTokens.tokenHash, hashToken(token)));
    await as(token, 'GET', '/api/me');
    expect((await lastUsed())!.getTime()).toBeGreaterThan(twoMinutesAgo.getTime() + 60_000);
  });

  it("lists a user's own tokens without hashes, and hides everyone else's as not found", async () => {
    const alice = await newUser('alice', 'coordinator');
    const bob = await newUser('bob', 'coordinator');

    const own = await as(alice.token, 'GET', `/api/users/${alice.user.id}/tokens`);
    expect(own.statusCode).toBe(200);
    expect(Object.keys(own.json().tokens[0]).sort()).toEqual(['createdAt', 'current', 'expiresAt', 'id', 'label', 'lastUsedAt', 'revokedAt', 'userId']);
    expect(own.json().tokens[0].current).toBe(true);
    expect(own.body).not.toContain(hashToken(alice.token));
    expect(own.body).not.toContain(alice.token);

    const others = await as(alice.token, 'GET', `/api/users/${bob.user.id}/tokens`);
    expect(others.statusCode).toBe(404);
    expect(others.body).not.toContain(hashToken(bob.token));
    expect((await as(ADMIN_TOKEN, 'GET', `/api/users/${bob.user.id}/tokens`)).json().tokens).toEqual([expect.objectContaining({ userId: bob.user.id, current: false })]);
  });

  it("revokes a user's own token at once, viewers included, but never someone else's unless admin", async () => {
    const carol = await newUser('carol', 'viewer');
    const dave = await newUser('dave', 'coordinator');
    const daveTokenId = (await as(dave.token, 'GET', `/api/users/${dave.user.id}/tokens`)).json().tokens[0].id;
    const carolTokenId = (await as(carol.token, 'GET', `/api/users/${carol.user.id}/tokens`)).json().tokens[0].id;

    const attack = await as(carol.token, 'POST', `/api/tokens/${daveTokenId}/revoke`);
    expect(attack.statusCode).toBe(404);
    expect((await as(dave.token, 'GET', '/api/me')).statusCode).toBe(200);

    const own = await as(carol.token, 'POST', `/api/tokens/${carolTokenId}/revoke`);
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ id: carolTokenId, revokedAt: expect.any(String) });
    const after = await as(carol.token, 'GET', '/api/me');
    expect(after.statusCode).toBe(401);
    expect(after.json()).toMatchObject({ details: { reason: 'revoked' } });
    expect(after.json().message).toContain('revoked');

    expect((await as(ADMIN_TOKEN, 'POST', `/api/tokens/${daveTokenId}/revoke`)).statusCode).toBe(200);
    expect((await as(dave.token, 'GET', '/api/me')).statusCode).toBe(401);
    // Revoking again changes nothing and is not audited twice.
    expect((await as(ADMIN_TOKEN, 'POST', `/api/tokens/${daveTokenId}/revoke`)).statusCode).toBe(200);
    const adminName = (await ctx.users.get(adminId))!.name;
    expect((await platformAudit(daveTokenId)).map((e) => [e.action, e.actor])).toEqual([['issued', 'dave'], ['revoked', adminName]]);
    expect((await platformAudit(carolTokenId)).map((e) => [e.action, e.actor])).toEqual([['issued', 'carol'], ['revoked', 'carol']]);
  });

  it('issues another token on request of an admin only, refusing a deactivated user', async () => {
    const erin = await newUser('erin', 'pi');
    expect((await as(erin.token, 'POST', `/api/users/${erin.user.id}/tokens`, {})).statusCode).toBe(403);

    const issued = await as(ADMIN_TOKEN, 'POST', `/api/users/${erin.user.id}/tokens`, { label: 'laptop' });
    expect(issued.statusCode).toBe(201);
    expect(issued.json()).toMatchObject({ token: expect.stringMatching(/^cla_/), id: expect.any(String), expiresAt: expect.any(String) });
    expect((await as(issued.json().token, 'GET', '/api/me')).json()).toMatchObject({ name: 'erin' });
    const withoutBody = await as(ADMIN_TOKEN, 'POST', `/api/users/${erin.user.id}/tokens`);
    expect(withoutBody.statusCode, withoutBody.body).toBe(201);
    const labels = (await as(ADMIN_TOKEN, 'GET', `/api/users/${erin.user.id}/tokens`)).json().tokens.map((t: { label: string }) => t.label);
    expect(labels.sort()).toEqual(['issued by admin', 'laptop', 'sign-in link']);

    await as(ADMIN_TOKEN, 'POST', `/api/users/${erin.user.id}/deactivate`);
    const refused = await as(ADMIN_TOKEN, 'POST', `/api/users/${erin.user.id}/tokens`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain('Reactivate');
  });

  it('lets only admins change roles, and audits the change', async () => {
    const frank = await newUser('frank', 'viewer');
    const pi = await newUser('pi-user', 'pi');

    const selfPromotion = await as(frank.token, 'PATCH', `/api/users/${frank.user.id}`, { role: 'admin' });
    expect(selfPromotion.statusCode).toBe(403);
    expect((await as(pi.token, 'PATCH', `/api/users/${frank.user.id}`, { role: 'coordinator' })).statusCode).toBe(403);

    const changed = await as(ADMIN_TOKEN, 'PATCH', `/api/users/${frank.user.id}`, { role: 'coordinator' });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ id: frank.user.id, role: 'coordinator', deactivatedAt: null });
    expect((await as(frank.token, 'GET', '/api/me')).json().role).toBe('coordinator');

    const unknownRole = await as(ADMIN_TOKEN, 'PATCH', `/api/users/${frank.user.id}`, { role: 'superuser' });
    expect(unknownRole.statusCode).toBe(400);
    expect(unknownRole.json().message).toContain('body.role');
    const adminName = (await ctx.users.get(adminId))!.name;
    expect((await platformAudit(frank.user.id)).slice(2)).toEqual([{ action: 'role_changed', actor: adminName, entityType: 'user', oldValue: { role: 'viewer' }, newValue: { role: 'coordinator' } }]);
  });

  it("stops a deactivated user's tokens at once and restores them on reactivation", async () => {
    const gina = await newUser('gina', 'coordinator');
    expect((await as(gina.token, 'GET', '/api/me')).statusCode).toBe(200);

    expect((await as(gina.token, 'POST', `/api/users/${gina.user.id}/deactivate`)).statusCode).toBe(403);
    const deactivated = await as(ADMIN_TOKEN, 'POST', `/api/users/${gina.user.id}/deactivate`);
    expect(deactivated.statusCode).toBe(200);
    expect(deactivated.json().deactivatedAt).toEqual(expect.any(String));

    const refused = await as(gina.token, 'GET', '/api/me');
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ details: { reason: 'deactivated' } });
    expect(refused.json().message).toContain('reactivate');
    const code = await ctx.users.issueLoginCode(gina.user.id);
    expect((await app.inject({ method: 'POST', url: '/api/auth/login', payload: { code } })).statusCode).toBe(401);

    expect((await as(ADMIN_TOKEN, 'POST', `/api/users/${gina.user.id}/reactivate`)).json().deactivatedAt).toBeNull();
    expect((await as(gina.token, 'GET', '/api/me')).statusCode).toBe(200);
    expect((await platformAudit(gina.user.id)).map((e) => e.action)).toEqual(['created', 'sign_in_link_issued', 'deactivated', 'reactivated']);
    const listed = (await as(ADMIN_TOKEN, 'GET', '/api/users')).json().users.find((u: { id: string }) => u.id === gina.user.id);
    expect(listed).toMatchObject({ name: 'gina', deactivatedAt: null, createdAt: expect.any(String) });
  });

  it('refuses to demote or deactivate the last active admin with 409 saying why', async () => {
    const demote = await as(ADMIN_TOKEN, 'PATCH', `/api/users/${adminId}`, { role: 'pi' });
    expect(demote.statusCode).toBe(409);
    expect(demote.json()).toMatchObject({ code: 'CONFLICT_STATE', details: { reason: 'last_active_admin' } });
    expect(demote.json().message).toMatch(/last active admin.*Make another user admin first/);
    const deactivate = await as(ADMIN_TOKEN, 'POST', `/api/users/${adminId}/deactivate`);
    expect(deactivate.statusCode).toBe(409);
    expect((await as(ADMIN_TOKEN, 'GET', '/api/me')).json().role).toBe('admin');

    // A deactivated admin does not count: with one, the active one is still the last.
    const dormant = await newUser('dormant-admin', 'admin');
    await as(ADMIN_TOKEN, 'POST', `/api/users/${dormant.user.id}/deactivate`);
    expect((await as(ADMIN_TOKEN, 'PATCH', `/api/users/${adminId}`, { role: 'pi' })).statusCode).toBe(409);
    await as(ADMIN_TOKEN, 'POST', `/api/users/${dormant.user.id}/reactivate`);
  });

  it('answers 404 for an unknown user and 400 naming the field for a malformed id', async () => {
    const unknown = await as(ADMIN_TOKEN, 'PATCH', '/api/users/00000000-0000-4000-8000-000000000000', { role: 'pi' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toContain('GET /api/users');
    const malformed = await as(ADMIN_TOKEN, 'POST', '/api/users/not-a-uuid/deactivate');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().message).toContain('params.id: must be a UUID');
  });

  it('lets exactly one of two admins demoting each other at the same moment succeed', async () => {
    // Start from exactly two active admins.
    const rows = await ctx.db.select().from(usersTable).where(eq(usersTable.role, 'admin'));
    for (const row of rows) if (row.id !== adminId) await ctx.db.update(usersTable).set({ role: 'pi' }).where(eq(usersTable.id, row.id));
    const second = await newUser('second-admin', 'admin');

    const [a, b] = await Promise.all([
      as(ADMIN_TOKEN, 'PATCH', `/api/users/${second.user.id}`, { role: 'coordinator' }),
      as(second.token, 'PATCH', `/api/users/${adminId}`, { role: 'coordinator' }),
    ]);

    const statuses = [a.statusCode, b.statusCode].sort();
    // The loser is refused either as the last admin (409) or because it is no longer an admin itself (403).
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const active = await ctx.db.select().from(usersTable).where(eq(usersTable.role, 'admin'));
    expect(active).toHaveLength(1);
  });
});
