import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions, taskRuns } from '../../src/core/db/schema/trial.js';
import { importRedcapCsv } from '../../src/trial/import/import-redcap-csv.js';
import { createTrialStore } from '../../src/trial/store/trial-store.js';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * Issue 32: "Buttons the role cannot use are enabled for a viewer (Reopen, bulk selection, Import preview); the
 * server refuses them correctly. Every page follows the role in the trial." A monitor added to the demo trial as a
 * viewer opens the queries page, a record, a skill and the import address, and is offered nothing the server would
 * refuse; the admin, on the same pages, still has them (and filters by rule, and reads bulk-close refusals by record).
 */

const ADMIN_TOKEN = 'e2e-admin-token-viewer-role-0123456789';
const PROJECT_ID = 'demo-htn-01';
/** A trial whose dictionary has a field name as long as REDCap allows names to be in practice (no spaces to break at). */
const LONG_NAMES = 'e2e-long-names';
const LONG_FIELD = 'serious_adverse_event_reported_to_ethics_committee_within_24_hours_date';
const DICTIONARY = `Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?,Custom Alignment,Question Number (surveys only),Matrix Group Name,Matrix Ranking?,Field Annotation
record_id,safety,,text,Subject ID,,,,,,,,,,,,,
${LONG_FIELD},safety,,text,SAE_reported_to_ethics_committee_within_24_hours_date,,,,,,,,,,,,,
`;

let browser: Browser;
let harness: Harness | undefined;
let viewerToken: string;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([launchBrowser(), startHarness({ name: 'viewer-role', adminToken: ADMIN_TOKEN, fallback: { reply: 'unused' } })]);
  const { ctx } = harness.server;
  const viewer = await ctx.users.create({ name: 'monitor-li', role: 'viewer' });
  await ctx.users.addMember(PROJECT_ID, viewer.user.id);
  viewerToken = (await ctx.users.issueToken(viewer.user.id, { label: 'e2e' })).token;
  await ctx.users.createProject({ id: LONG_NAMES, name: 'Long names' });
  await ctx.users.addMember(LONG_NAMES, viewer.user.id);
  await importRedcapCsv(createTrialStore(ctx.db), LONG_NAMES, { dictionaryCsv: DICTIONARY, recordsCsv: `record_id,${LONG_FIELD}\nR1,2026-03-02\n` }, 'e2e');
  // A closed query (its lifecycle allows Reopen) and an open one, on two records of the demo trial.
  const [run] = await ctx.db.insert(taskRuns).values({ projectId: PROJECT_ID, skillId: 'demo-core-checks', recordId: 'S010', status: 'COMPLETED', currentNode: 'end' }).returning();
  const query = { projectId: PROJECT_ID, taskRunId: run!.id, eventName: 'v1_arm_1', site: '', nodeId: 'core_checks', severity: 'error' as const };
  await ctx.db.insert(pendingActions).values([
    { ...query, recordId: 'S010', ruleId: 'age-18-75', field: 'v1_arm_1.age', message: 'Age must be 18-75', status: 'closed' },
    { ...query, recordId: 'S002', ruleId: 'weight-max', field: 'v1_arm_1.weight_kg', message: 'Weight above 200 kg', status: 'open' },
  ]);
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

async function openQueries(page: Page, token: string): Promise<void> {
  await signIn(page, harness!.server.url, token);
  await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/queries`);
  await page.locator('[data-testid="query-row"][data-status="closed"]').first().waitFor({ timeout: UI_TIMEOUT_MS });
}

describe('pages follow the role in the trial', () => {
  it('offers a viewer no query move, no selection, no skill validation or dry run, and no import', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'viewer-role', async () => {
        await openQueries(page, viewerToken);
        expect(await page.locator('[data-testid^="query-action-"]').count()).toBe(0);
        expect(await page.getByTestId('query-select').count()).toBe(0);
        expect(await page.getByTestId('query-select-page').count()).toBe(0);
        // Reading pages is for everyone: the query list's pager, with its rows per page.
        expect(await page.getByTestId('query-pager-page').textContent()).toMatch(/^Page 1 of \d+$/);
        expect(await page.getByTestId('query-pager').getByTestId('query-page-size').count()).toBe(1);
        // The closed query is not advised to be closed.
        expect(await page.locator('body').textContent()).not.toContain('close it if the data are now correct');

        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/records/S002`);
        await page.getByTestId('record-title').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.locator('[data-testid^="query-action-"]').count()).toBe(0);

        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/skills/demo-core-checks`);
        const editor = page.getByTestId('skill-editor');
        await editor.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await editor.getAttribute('contenteditable')).toBe('false');
        expect(await page.getByTestId('skill-validate').count()).toBe(0);
        expect(await page.getByTestId('skill-dry-run').count()).toBe(0);
        expect(await page.getByTestId('skill-save').count()).toBe(0);

        expect(await page.getByTestId('trial-tab-import').count()).toBe(0);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/import`);
        await page.getByTestId('trial-read-only').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('import-preview').count()).toBe(0);
      });
    } finally {
      await context.close();
    }
  }, 120_000);

  it('keeps a long field name inside its column on the record page', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'viewer-role-long-names', async () => {
        await signIn(page, harness!.server.url, viewerToken);
        await page.goto(`${harness!.server.url}/#/trial/${LONG_NAMES}/records/R1`);
        await page.getByTestId('crf').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.locator('.crf-name', { hasText: LONG_FIELD }).waitFor({ timeout: UI_TIMEOUT_MS });
        // Nothing in the field column is wider than the column: the name wraps instead of running over the visits.
        const overflowing = await page.locator('th.record-field-col').evaluateAll((cells) =>
          cells.filter((cell) => cell.scrollWidth > cell.clientWidth + 1 || Array.from(cell.querySelectorAll('*')).some((child) => child.getBoundingClientRect().right > cell.getBoundingClientRect().right + 1)).map((cell) => cell.textContent),
        );
        expect(overflowing).toEqual([]);
      });
    } finally {
      await context.close();
    }
  }, 120_000);

  it('gives the admin the same pages with their moves, a rule filter, and bulk-close refusals named by record', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'viewer-role-admin', async () => {
        await openQueries(page, ADMIN_TOKEN);
        await page.locator('[data-testid="query-row"][data-status="closed"] [data-testid="query-action-reopened"]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('trial-tab-import').count()).toBe(1);

        await page.getByTestId('query-filter-rule').selectOption('weight-max');
        await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid="query-row"]')).every((row) => row.textContent?.includes('weight-max')) && document.querySelectorAll('[data-testid="query-row"]').length === 1, undefined, { timeout: UI_TIMEOUT_MS });

        await page.getByTestId('query-filter-rule').selectOption('');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="query-row"]').length === 2, undefined, { timeout: UI_TIMEOUT_MS });
        await page.getByTestId('query-select-page').check();
        await page.getByTestId('query-bulk-close').click();
        await page.getByTestId('query-bulk-reason').fill('Checked against source');
        await page.getByTestId('query-bulk-confirm').click();
        const skipped = page.getByTestId('query-bulk-skipped');
        await skipped.first().waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await skipped.count()).toBe(1);
        expect(await skipped.getAttribute('data-record-id')).toBe('S010');
        expect(await skipped.textContent()).toContain('record S010');
        expect(await page.getByTestId('query-bulk-result').textContent()).toContain('1 query closed.');
      });
    } finally {
      await context.close();
    }
  }, 120_000);
});
