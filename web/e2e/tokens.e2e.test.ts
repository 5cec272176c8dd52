import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * Tokens and users in the console against the real server: a coordinator sees and revokes their own tokens
 * (the one this browser uses included), and an admin revokes anyone's token, deactivates a user and is told
 * why the last admin cannot be deactivated.
 */

const ADMIN_TOKEN = 'e2e-admin-token-tokens-0123456789abcdef';

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
  harness = await startHarness({ name: 'tokens', adminToken: ADMIN_TOKEN, fallback: { reply: 'unused' } });
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

async function api<T>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: T }> {
  const response = await fetch(`${harness!.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as T };
}

/** Created as an admin does (the answer is a one-time sign-in link, never a token), then signed in once with it. */
async function createUser(name: string, role: string): Promise<{ id: string; token: string }> {
  const { status, json } = await api<{ user: { id: string }; signInLink: string; token?: string }>('POST', '/api/users', ADMIN_TOKEN, { name, role });
  expect(status).toBe(201);
  expect(json.token).toBeUndefined();
  const code = new URL(json.signInLink).searchParams.get('login');
  const login = await fetch(`${harness!.server.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  expect(login.status).toBe(200);
  return { id: json.user.id, token: ((await login.json()) as { token: string }).token };
}

const tokenRow = (page: Page, label: string) => page.getByTestId('token-row').filter({ hasText: label });

describe('the tokens page', () => {
  it('lets a coordinator revoke a lost token, then the one this browser uses, which signs them out', async () => {
    const nurse = await createUser('nurse-wang', 'coordinator');
    const laptop = await api<{ token: string }>('POST', `/api/users/${nurse.id}/tokens`, ADMIN_TOKEN, { label: 'old laptop' });
    expect(laptop.status).toBe(201);
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'tokens-own', async () => {
        await signIn(page, harness!.server.url, nurse.token);
        expect(await page.getByTestId('nav-users').count()).toBe(0);
        await page.getByTestId('nav-tokens').click();
        await tokenRow(page, 'old laptop').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('token-row').count()).toBe(2);
        const current = tokenRow(page, 'sign-in link');
        expect(await current.getByTestId('token-current').textContent()).toBe('This browser');
        expect(await page.getByTestId('token-table').textContent()).not.toContain(nurse.token);

        await tokenRow(page, 'old laptop').getByTestId('token-revoke').click();
        await page.locator('[data-testid="token-row"][data-state="revoked"]').filter({ hasText: 'old laptop' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect((await api('GET', '/api/me', laptop.json.token)).status).toBe(401);
        expect((await api('GET', '/api/me', nurse.token)).status).toBe(200);

        await current.getByTestId('token-revoke').click();
        const notice = page.getByTestId('sign-in-notice');
        await notice.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await notice.textContent()).toContain('revoked');
        expect((await api('GET', '/api/me', nurse.token)).status).toBe(401);
      });
    } finally {
      await context.close();
    }
  });
});

describe('the users page', () => {
  it("lets an admin revoke anyone's token and deactivate a user, but not the last admin", async () => {
    const doctor = await createUser('dr-zhao', 'pi');
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'users-admin', async () => {
        await signIn(page, harness!.server.url, ADMIN_TOKEN);
        await page.getByTestId('nav-users').click();
        const doctorRow = page.locator('[data-testid="user-row"][data-user-name="dr-zhao"]');
        await doctorRow.waitFor({ timeout: UI_TIMEOUT_MS });

        await doctorRow.getByTestId('user-tokens-toggle').click();
        const doctorTokens = page.locator(`[data-testid="token-table"][data-user-id="${doctor.id}"]`);
        await doctorTokens.getByTestId('token-revoke').click();
        await doctorTokens.locator('[data-testid="token-row"][data-state="revoked"]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect((await api('GET', '/api/me', doctor.token)).status).toBe(401);

        await doctorRow.getByTestId('user-role').selectOption('viewer');
        await doctorRow.getByTestId('user-deactivate').click();
        await page.locator('[data-testid="user-row"][data-user-name="dr-zhao"][data-state="deactivated"]').waitFor({ timeout: UI_TIMEOUT_MS });
        const users = await api<{ users: Array<{ name: string; role: string; deactivatedAt: string | null }> }>('GET', '/api/users', ADMIN_TOKEN);
        expect(users.json.users.find((u) => u.name === 'dr-zhao')).toMatchObject({ role: 'viewer', deactivatedAt: expect.any(String) });

        const adminRow = page.locator('[data-testid="user-row"][data-user-name="admin"]');
        await adminRow.getByTestId('user-deactivate').click();
        const error = page.getByTestId('user-change-error');
        await error.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await error.textContent()).toContain('last active admin');
        expect((await api('GET', '/api/me', ADMIN_TOKEN)).status).toBe(200);
      });
    } finally {
      await context.close();
    }
  });
});
