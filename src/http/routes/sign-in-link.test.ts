import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import { apiTokens, loginCodes } from '../../core/db/schema/auth.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { hashToken } from '../../core/auth/tokens.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

const ADMIN_TOKEN = 'admin-token-for-sign-in-link-tests-0123';
/** The server's default is 20 attempts in 15 minutes; the test moves the clock past this window instead of waiting. */
const WINDOW_SECONDS = 2;

/**
 * Moves the clock the rate limiter reads (Date) past its window, then lets it run on: only Date is faked, so
 * sockets, timers and the database run as usual.
 */
function passTheWindow(): void {
  const later = Date.now() + WINDOW_SECONDS * 1000 + 1;
  vi.useRealTimers();
  vi.useFakeTimers({ toFake: ['Date'], now: later, shouldAdvanceTime: true });
}
const MAX_ATTEMPTS = 8;

/**
 * Issue 32: a new user got a reusable 30-day bearer token, shown once to the admin who created them, while the admin
 * got a one-time link. Now POST /api/users answers with a one-time sign-in link (never a token); the link works once
 * and expires. And sign-in codes had no rate limit: guessing them gets 429s saying when to try again.
 */
describe.each(testEngines())('sign-in links for new users, and sign-in attempts, on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const login = (code: unknown) => app.inject({ method: 'POST', url: '/api/auth/login', payload: { code } });
  const codeOf = (link: string) => new URL(link).searchParams.get('login')!;
  const create = async (name: string, role: string) => {
    const response = await app.inject({ method: 'POST', url: '/api/users', headers: { ...admin, host: 'clinagent.example.org:3000' }, payload: { name, role } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ user: { id: string; name: string; role: string }; signInLink: string; expiresAt: string; token?: string }>();
  };

  beforeAll(async () => {
    ctx = await buildTestContext({ engine, env: { SIGN_IN_MAX_ATTEMPTS: String(MAX_ATTEMPTS), SIGN_IN_WINDOW_SECONDS: String(WINDOW_SECONDS) } });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.bootstrapAdmin(ADMIN_TOKEN);
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers a new user with a one-time link to the console, not a bearer token, and holds no token for them', async () => {
    const before = Date.now();
    const created = await create('nurse-li', 'coordinator');
    expect(created.token).toBeUndefined();
    expect(created.user).toMatchObject({ name: 'nurse-li', role: 'coordinator' });
    expect(created.signInLink).toMatch(/^http:\/\/clinagent\.example\.org:3000\/\?login=login_[\w-]{40,}$/);
    const expiresIn = Date.parse(created.expiresAt) - before;
    expect(expiresIn).toBeGreaterThan(23 * 60 * 60 * 1000);
    expect(expiresIn).toBeLessThanOrEqual(24 * 60 * 60 * 1000 + 60_000);
    expect(await ctx.db.select().from(apiTokens).where(eq(apiTokens.userId, created.user.id))).toEqual([]);
    // The audit trail says a link was issued, and never holds the code itself.
    const trail = JSON.stringify(await ctx.db.select().from(auditLog).where(eq(auditLog.projectId, PLATFORM_AUDIT_SCOPE)));
    expect(trail).toContain('sign_in_link_issued');
    expect(trail).not.toContain(codeOf(created.signInLink));
  });

  it("puts the link on the console's address as the admin's browser sent it, https behind a proxy that ends TLS", async () => {
    const response = await app.inject({ method: 'POST', url: '/api/users', headers: { ...admin, host: '127.0.0.1:3000', origin: 'https://trials.hospital.example.org' }, payload: { name: 'nurse-proxy', role: 'coordinator' } });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().signInLink).toMatch(/^https:\/\/trials\.hospital\.example\.org\/\?login=login_/);
  });

  it('signs the user in once with the link; the link then no longer works, and the token is theirs', async () => {
    const created = await create('dr-chen', 'pi');
    const first = await login(codeOf(created.signInLink));
    expect(first.statusCode, first.body).toBe(200);
    const { token, user } = first.json<{ token: string; user: { id: string } }>();
    expect(user.id).toBe(created.user.id);
    expect((await app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${token}` } })).json()).toMatchObject({ name: 'dr-chen', role: 'pi' });
    const again = await login(codeOf(created.signInLink));
    expect(again.statusCode).toBe(401);
    expect(again.json().message).toContain('invalid, expired or already used');
  });

  it('refuses an expired link', async () => {
    const created = await create('late-user', 'viewer');
    await ctx.db.update(loginCodes).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(loginCodes.codeHash, hashToken(codeOf(created.signInLink))));
    expect((await login(codeOf(created.signInLink))).statusCode).toBe(401);
  });

  it('gives an admin a new link for a user whose link was lost, and refuses it to others and for a deactivated user', async () => {
    const created = await create('lost-link', 'coordinator');
    const other = await create('other-user', 'pi');
    const otherToken = (await login(codeOf(other.signInLink))).json<{ token: string }>().token;
    const forbidden = await app.inject({ method: 'POST', url: `/api/users/${created.user.id}/sign-in-link`, headers: { authorization: `Bearer ${otherToken}` } });
    expect(forbidden.statusCode).toBe(403);
    const fresh = await app.inject({ method: 'POST', url: `/api/users/${created.user.id}/sign-in-link`, headers: admin });
    expect(fresh.statusCode, fresh.body).toBe(201);
    expect(fresh.json()).toMatchObject({ user: { id: created.user.id }, signInLink: expect.stringContaining('/?login=login_'), expiresAt: expect.any(String) });
    expect((await login(codeOf(fresh.json<{ signInLink: string }>().signInLink))).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: `/api/users/${created.user.id}/deactivate`, headers: admin })).statusCode).toBe(200);
    const deactivated = await app.inject({ method: 'POST', url: `/api/users/${created.user.id}/sign-in-link`, headers: admin });
    expect(deactivated.statusCode).toBe(409);
    expect(deactivated.json().message).toContain('Reactivate them first');
  });

  it('answers guessed codes with 429 saying when to retry, and a valid code works once the window has passed', async () => {
    const created = await create('patient-guesser', 'viewer');
    passTheWindow(); // the attempts of the tests before this one no longer count
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof login>> | undefined;
    for (let i = 0; i < MAX_ATTEMPTS + 3; i++) {
      const response = await login(`login_guess${i}`);
      statuses.push(response.statusCode);
      if (response.statusCode === 429) limited = response;
    }
    expect(statuses).toEqual([...Array(MAX_ATTEMPTS).fill(401), 429, 429, 429]);
    // A forged X-Forwarded-For does not buy a new budget: without TRUST_PROXY the header is not the client's address.
    const forged = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { code: 'login_forged' }, headers: { 'x-forwarded-for': '203.0.113.99' } });
    expect(forged.statusCode).toBe(429);
    expect(limited!.json()).toMatchObject({ code: 'TOO_MANY_ATTEMPTS', details: { retryAfterSeconds: expect.any(Number) } });
    expect(limited!.json().message).toMatch(/Try again in \d+ s/);
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(0);
    // Even the right code waits: the limit is on attempts from this address, not on wrong ones only.
    expect((await login(codeOf(created.signInLink))).statusCode).toBe(429);
    passTheWindow();
    const after = await login(codeOf(created.signInLink));
    expect(after.statusCode, after.body).toBe(200);
  });
});

describe.each(testEngines())('sign-in attempts behind a reverse proxy on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  it('counts each client by X-Forwarded-For when TRUST_PROXY names the proxy, so one guesser does not lock everyone out', async () => {
    ctx = await buildTestContext({ engine, env: { SIGN_IN_MAX_ATTEMPTS: '2', SIGN_IN_WINDOW_SECONDS: '60', TRUST_PROXY: '127.0.0.1' } });
    app = await buildServer(ctx, { serveConsole: false });
    const from = (client: string) => app.inject({ method: 'POST', url: '/api/auth/login', payload: { code: 'login_guess' }, headers: { 'x-forwarded-for': client } });
    const guesser = [await from('198.51.100.7'), await from('198.51.100.7'), await from('198.51.100.7')].map((r) => r.statusCode);
    expect(guesser).toEqual([401, 401, 429]);
    // Another client behind the same proxy still has its attempts.
    expect((await from('198.51.100.8')).statusCode).toBe(401);
  });
});
