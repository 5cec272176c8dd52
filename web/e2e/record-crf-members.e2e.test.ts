import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions, taskRuns } from '../../src/core/db/schema/trial.js';
import { importRedcapCsv } from '../../src/trial/import/import-redcap-csv.js';
import { createTrialStore } from '../../src/trial/store/trial-store.js';
import { buildConsole, launchBrowser, repoRoot, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * Issue 25: "The record page reads like a CRF: ... visits as columns with their event labels, flagged cells
 * highlighted with their queries" and "The console cannot create users or add them to a trial; a coordinator's
 * access to identifier fields is set there too." An admin creates a coordinator, adds them to a longitudinal trial
 * without identifier access (their record page masks the birth date), then grants it (the date shows); the admin's
 * record page shows the visits as labelled columns, coded values by label and a flagged cell with its query.
 */

const ADMIN_TOKEN = 'e2e-admin-token-crf-0123456789abcdef';
const PROJECT_ID = 'e2e-crf';
const SBP_QUERY = 'Systolic BP 132 above the protocol limit of 130 mmHg';
const testData = (name: string) => readFileSync(path.join(repoRoot, 'test-data', 'trial', 'odm', name), 'utf8');

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([launchBrowser(), startHarness({ name: 'crf', adminToken: ADMIN_TOKEN, fallback: { reply: 'ok' } })]);
  const { db } = harness.server.ctx;
  const store = createTrialStore(db);
  await harness.server.ctx.users.createProject({ id: PROJECT_ID, name: 'E2E CRF study' });
  await importRedcapCsv(store, PROJECT_ID, { dictionaryCsv: testData('dictionary.csv'), eventsCsv: testData('events.csv'), armsCsv: testData('arms.csv'), recordsCsv: testData('records.csv') }, 'e2e');
  const [run] = await db.insert(taskRuns).values({ projectId: PROJECT_ID, skillId: 'e2e', recordId: '101', status: 'COMPLETED', currentNode: 'end' }).returning();
  await db.insert(pendingActions).values({ projectId: PROJECT_ID, taskRunId: run!.id, recordId: '101', eventName: 'baseline_arm_1', site: 'site_a', nodeId: 'checks', ruleId: 'sbp-limit', field: 'baseline_arm_1.sbp', message: SBP_QUERY, severity: 'warning', value: 132 });
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

const cell = (page: Page, field: string, event: string) => page.locator(`td[data-field="${field}"][data-event="${event}"]`);

async function openRecord(page: Page, serverUrl: string, recordId: string): Promise<void> {
  await page.goto(`${serverUrl}/#/trial/${PROJECT_ID}/records/${recordId}`);
  await page.getByTestId('crf').waitFor({ timeout: UI_TIMEOUT_MS });
}

describe('the record page as a CRF, and trial members from the console', () => {
  it('creates a coordinator, adds them without identifier access (masked), then grants it (shown), and removes them', async () => {
    const { server } = harness!;
    const admin = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const coordinator = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const adminPage = await admin.newPage();
    const crcPage = await coordinator.newPage();
    try {
      await withScreenshot(adminPage, 'crf-members-admin', async () => {
        await signIn(adminPage, server.url, ADMIN_TOKEN);
        await adminPage.goto(`${server.url}/#/users`);
        await adminPage.getByTestId('user-create-name').fill('e2e-crc');
        await adminPage.getByTestId('user-create-role').selectOption('coordinator');
        await adminPage.getByTestId('user-create').click();
        // The admin gets a one-time sign-in link to pass on, never the user's token.
        let token = '';
        const link = (await adminPage.getByTestId('user-created-link').textContent({ timeout: UI_TIMEOUT_MS }))!.trim();
        expect(link.startsWith(`${server.url}/?login=login_`), link).toBe(true);
        await adminPage.locator('[data-testid="user-row"][data-user-name="e2e-crc"]').waitFor({ timeout: UI_TIMEOUT_MS });

        await adminPage.goto(`${server.url}/#/trial/${PROJECT_ID}/members`);
        await adminPage.getByTestId('member-add-user').locator('option', { hasText: 'e2e-crc' }).waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS });
        await adminPage.getByTestId('member-add-user').selectOption({ label: 'e2e-crc (Coordinator)' });
        await adminPage.getByTestId('member-add').click();
        const row = adminPage.locator('[data-testid="member-row"][data-user-name="e2e-crc"]');
        await row.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await row.getByTestId('member-identifiers-toggle').isChecked()).toBe(false);
        await snap(adminPage, 'en-trial-members');

        await withScreenshot(crcPage, 'crf-members-coordinator', async () => {
          // The coordinator opens the link once: signed in, holding a token of their own.
          await crcPage.goto(link);
          await crcPage.getByTestId('nav-tokens').waitFor({ timeout: UI_TIMEOUT_MS });
          token = (await crcPage.evaluate(() => localStorage.getItem('clinagent.token')))!;
          expect(token).toMatch(/^cla_/);
          await openRecord(crcPage, server.url, '101');
          await cell(crcPage, 'dob', 'screening_arm_1').getByTestId('record-masked-value').waitFor({ timeout: UI_TIMEOUT_MS });
          expect(await crcPage.getByTestId('crf').textContent()).not.toContain('1961-05-12');

          // The site answers queries; closing them is data management's: no Close, no selection to close in bulk.
          await crcPage.goto(`${server.url}/#/trial/${PROJECT_ID}/queries`);
          await crcPage.getByTestId('query-action-answered').first().waitFor({ timeout: UI_TIMEOUT_MS });
          expect(await crcPage.getByTestId('query-action-closed').count()).toBe(0);
          expect(await crcPage.getByTestId('query-select').count()).toBe(0);
        });

        // click, not check: the box is controlled and turns only once the server has granted the access.
        await row.getByTestId('member-identifiers-toggle').click();
        await adminPage.waitForFunction(() => document.querySelector('[data-testid="member-row"][data-user-name="e2e-crc"]')?.getAttribute('data-sees-identifiers') === 'true', undefined, { timeout: UI_TIMEOUT_MS });

        await withScreenshot(crcPage, 'crf-members-coordinator-granted', async () => {
          await openRecord(crcPage, server.url, '101');
          await crcPage.reload();
          await crcPage.getByTestId('crf').waitFor({ timeout: UI_TIMEOUT_MS });
          await crcPage.waitForFunction(() => document.querySelector('td[data-field="dob"][data-event="screening_arm_1"]')?.textContent?.includes('1961-05-12'), undefined, { timeout: UI_TIMEOUT_MS });
          expect(await cell(crcPage, 'dob', 'screening_arm_1').getByTestId('record-masked-value').count()).toBe(0);
        });

        // A role for this trial only: the coordinator may only read here, at once, and is one again when handed back.
        const rememberAs = () =>
          fetch(`${server.url}/api/iit/projects/${PROJECT_ID}/memory/facts`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ facts: [{ section: 'state', text: 'Visit 2 moved.' }] }) });
        await row.getByTestId('member-role').selectOption('viewer');
        await adminPage.waitForFunction(() => document.querySelector('[data-testid="member-row"][data-user-name="e2e-crc"]')?.getAttribute('data-role') === 'viewer', undefined, { timeout: UI_TIMEOUT_MS });
        expect(await row.textContent()).toContain('Platform role (Coordinator)');
        expect((await rememberAs()).status).toBe(403);
        await row.getByTestId('member-role').selectOption('');
        await adminPage.waitForFunction(() => document.querySelector('[data-testid="member-row"][data-user-name="e2e-crc"]')?.getAttribute('data-role') === 'coordinator', undefined, { timeout: UI_TIMEOUT_MS });
        expect((await rememberAs()).status).toBe(200);

        // Made the trial's data manager, the same person is offered Close on the query page.
        await row.getByTestId('member-role').selectOption('data_manager');
        await adminPage.waitForFunction(() => document.querySelector('[data-testid="member-row"][data-user-name="e2e-crc"]')?.getAttribute('data-role') === 'data_manager', undefined, { timeout: UI_TIMEOUT_MS });
        await withScreenshot(crcPage, 'crf-members-data-manager', async () => {
          await crcPage.goto(`${server.url}/#/trial/${PROJECT_ID}/queries`);
          await crcPage.reload();
          await crcPage.getByTestId('query-action-closed').first().waitFor({ timeout: UI_TIMEOUT_MS });
          expect(await crcPage.getByTestId('query-select').count()).toBeGreaterThan(0);
        });
        await row.getByTestId('member-role').selectOption('');
        await adminPage.waitForFunction(() => document.querySelector('[data-testid="member-row"][data-user-name="e2e-crc"]')?.getAttribute('data-role') === 'coordinator', undefined, { timeout: UI_TIMEOUT_MS });

        adminPage.once('dialog', (dialog) => void dialog.accept());
        await row.getByTestId('member-remove').click();
        await row.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
        const members = await fetch(`${server.url}/api/iit/projects/${PROJECT_ID}/members`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then(async (response) => (await response.json()).members as Array<{ name: string }>);
        expect(members.map((member) => member.name)).not.toContain('e2e-crc');
      });
    } finally {
      await admin.close();
      await coordinator.close();
    }
  }, 120_000);

  it('shows a longitudinal record with visits as labelled columns, coded values by label and a flagged cell with its query', async () => {
    const { server } = harness!;
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'crf-record', async () => {
        await signIn(page, server.url, ADMIN_TOKEN);
        await openRecord(page, server.url, '101');
        const vitals = page.locator('[data-testid="crf-form"][data-form="vitals"]');
        expect(await vitals.getByTestId('crf-event-label').allTextContents()).toEqual(['Screening', 'Baseline', 'Week 4']);
        expect(await page.locator('[data-testid="crf-form"]').evaluateAll((forms) => forms.map((form) => form.getAttribute('data-form')))).toEqual(['demographics', 'vitals', 'labs']);
        expect(await vitals.locator('[data-testid="crf-row"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-field')))).toEqual(['visit_date', 'weight', 'sbp', 'symptoms']);

        expect(await cell(page, 'sex', 'screening_arm_1').textContent()).toBe('Male (1)');
        expect(await cell(page, 'symptoms', 'baseline_arm_1').textContent()).toBe('Headache');

        const flagged = page.locator('[data-testid="crf-cell-flagged"]');
        expect(await flagged.count()).toBe(1);
        expect(await flagged.getAttribute('data-field')).toBe('sbp');
        expect(await flagged.getAttribute('data-event')).toBe('baseline_arm_1');
        const query = flagged.getByTestId('crf-cell-query');
        expect(await query.textContent()).toContain(SBP_QUERY);
        expect(await query.textContent()).toContain('Open');
        expect(await flagged.textContent()).toContain('132');
        await snap(page, 'en-record-crf');

        // The raw rows stay a click away.
        await page.getByTestId('record-view-toggle').click();
        await page.getByTestId('record-events').waitFor({ timeout: UI_TIMEOUT_MS });
      });
    } finally {
      await context.close();
    }
  });
});
