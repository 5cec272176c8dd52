import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, repoRoot, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The item: "Create a trial and import its data from the console ... A preview shows what will be imported
 * and every problem by line (or ODM element) and field before anything is written." An admin creates a trial, a
 * broken ODM export is previewed with its problem and cannot be imported, the fixed one is previewed and imported.
 */

const ADMIN_TOKEN = 'e2e-admin-token-import-0123456789abcdef';
const PROJECT_ID = 'e2e-import';
const odm = readFileSync(path.join(repoRoot, 'test-data', 'trial', 'odm', 'project.odm.xml'), 'utf8');
const brokenOdm = odm.replace('<ItemData ItemOID="sbp" Value="132"/>', '<ItemData ItemOID="sbp" Value="13x"/>');
const correctedOdm = odm.replace('<ItemData ItemOID="sbp" Value="132"/>', '<ItemData ItemOID="sbp" Value="134"/>');

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([launchBrowser(), startHarness({ name: 'import', adminToken: ADMIN_TOKEN, fallback: { reply: 'ok' } })]);
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

describe('a trial created and imported in the console', () => {
  it('creates a trial, refuses a broken ODM export at preview, and imports the fixed one', async () => {
    const { server } = harness!;
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    const records = () => fetch(`${server.url}/api/iit/projects/${PROJECT_ID}/records`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then(async (response) => (await response.json()).records as unknown[]);
    try {
      await withScreenshot(page, 'trial-import', async () => {
        await signIn(page, server.url, ADMIN_TOKEN);
        await page.getByTestId('nav-trial').click();
        await page.getByTestId('new-trial').click();
        await page.getByTestId('new-trial-id').fill(PROJECT_ID);
        await page.getByTestId('new-trial-name').fill('E2E import study');
        await page.getByTestId('new-trial-form').locator('button[type="submit"]').click();
        await page.waitForURL(new RegExp(`#/trial/${PROJECT_ID}/import$`), { timeout: UI_TIMEOUT_MS });

        await page.getByTestId('import-format-odm').check();
        await page.getByTestId('import-file-odm').setInputFiles({ name: 'project.odm.xml', mimeType: 'application/xml', buffer: Buffer.from(brokenOdm) });
        await page.getByTestId('import-preview').click();
        const problem = page.getByTestId('import-problem').first();
        await problem.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await problem.textContent()).toContain('ItemData[@ItemOID="sbp"]');
        expect(await problem.textContent()).toContain('13x');
        expect(await page.getByTestId('import-run').isDisabled()).toBe(true);
        expect(await records()).toEqual([]);
        await snap(page, 'en-import-problems');

        await page.getByTestId('import-file-odm').setInputFiles({ name: 'project.odm.xml', mimeType: 'application/xml', buffer: Buffer.from(odm) });
        await page.getByTestId('import-preview').click();
        await page.getByTestId('import-preview-counts').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('import-count-rows').textContent()).toBe('13');
        expect(await page.getByTestId('import-count-records').textContent()).toBe('13 new · 0 changed · 0 unchanged');
        expect(await records()).toEqual([]);
        await snap(page, 'en-import-preview');

        await page.getByTestId('import-run').click();
        const done = page.getByTestId('import-done');
        await done.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await done.textContent()).toBe('Imported: 13 new, 0 changed, 0 unchanged record rows.');
        expect(await records()).toHaveLength(13);
        await page.waitForFunction(() => document.querySelector('[data-testid="trial-project-summary"]')?.textContent?.startsWith('5 subjects'), undefined, { timeout: UI_TIMEOUT_MS });

        // A correction export: the preview lists what "1 changed" changes, under the file's own name.
        await page.getByTestId('import-file-odm').setInputFiles({ name: 'HTN_corrections_0603.xml', mimeType: 'application/xml', buffer: Buffer.from(correctedOdm) });
        await page.getByTestId('import-preview').click();
        await page.getByTestId('import-preview-counts').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('import-count-records').textContent()).toBe('0 new · 1 changed · 12 unchanged');
        const change = page.getByTestId('import-change');
        expect(await change.count()).toBe(1);
        expect((await change.first().locator('td').allTextContents()).map((cell) => cell.trim())).toEqual(['101', 'baseline_arm_1', 'sbp', '132', '134']);
        expect(await page.getByTestId('import-warnings').textContent()).toContain('HTN_corrections_0603.xml line');
        expect(await page.getByTestId('import-warnings').textContent()).not.toContain('project.odm.xml');
        await snap(page, 'en-import-changes');
      });
    } finally {
      await context.close();
    }
  });
});
