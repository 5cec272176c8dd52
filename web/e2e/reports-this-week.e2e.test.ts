import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationTurns } from '../../src/core/db/schema/conversations.js';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The report of the running week on the Reports page: a writer asks for "this week so far" (in a new install last
 * week has no conversations), and the list marks it as partial, until when it was made; a viewer sees the mark but
 * not the button.
 */

const PROJECT_ID = 'demo-htn-01';
const WEEK_REPORT = 'The team set up screening logs this week.';

let browser: Browser;
let harness: Harness | undefined;
let writerToken: string;
let viewerToken: string;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([launchBrowser(), startHarness({ name: 'reports-this-week', fallback: { reply: WEEK_REPORT } })]);
  const { ctx } = harness.server;
  const writer = await ctx.users.create({ name: 'crc-wang', role: 'coordinator' });
  const viewer = await ctx.users.create({ name: 'monitor-zhao', role: 'viewer' });
  await ctx.users.addMember(PROJECT_ID, writer.user.id);
  await ctx.users.addMember(PROJECT_ID, viewer.user.id);
  [writerToken, viewerToken] = [writer.token, viewer.token];
  // One conversation of this week, the week's only source: the report can be written before the week ends.
  const { id } = await ctx.conversations.start({ actor: writer.user, projectId: PROJECT_ID, title: 'first days' });
  await ctx.db.insert(conversationTurns).values({ conversationId: id, seq: 1, role: 'user', content: 'How do we keep screening logs?', createdAt: new Date() });
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

describe('the report of this week so far', () => {
  it('is written by a writer from the Reports page and listed as partial', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'reports-this-week', async () => {
        await signIn(page, harness!.server.url, writerToken);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/reports`);
        await page.getByTestId('reports-page').getByText('No reports yet').waitFor({ timeout: UI_TIMEOUT_MS });

        const request = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === `/api/iit/projects/${PROJECT_ID}/reports/regenerate`);
        await page.getByTestId('report-this-week').click();
        const weekStart = ((await request).postDataJSON() as { weekStart: string }).weekStart;
        const report = page.locator('[data-testid="report-row"][data-kind="week"]');
        await report.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await report.getByTestId('report-summary').textContent()).toBe(WEEK_REPORT);
        expect(await report.getByTestId('report-partial').textContent()).toMatch(/^so far, until \S/);
        expect(await report.textContent()).toContain(`week starting ${weekStart}`);
        expect(new Date(`${weekStart}T00:00:00Z`).getUTCDay()).toBe(1);
        expect(Date.now() - Date.parse(`${weekStart}T00:00:00Z`)).toBeLessThan(7 * 24 * 3600 * 1000);
      });
    } finally {
      await context.close();
    }
  }, 120_000);

  it('when the model fails, is not replaced: the writer reads why in plain words and the report that stands stays shown', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'reports-this-week-not-stored', async () => {
        await signIn(page, harness!.server.url, writerToken);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/reports`);
        const report = page.locator('[data-testid="report-row"][data-kind="week"]');
        await report.waitFor({ timeout: UI_TIMEOUT_MS });
        // A model that answers with the report's fields as data instead of prose.
        harness!.model.push({ reply: '{"summary": "screening logs", "highlights": ["logs"]}' });

        await page.getByTestId('report-this-week').click();

        const notice = page.getByTestId('report-regenerate-notice');
        await notice.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await notice.textContent()).toMatch(/could not be written: the model's answer was unusable .*The previous report of week \d{4}-W\d{2} \(made .+ UTC\) stands unchanged\./);
        expect(await notice.textContent()).not.toContain('{');
        expect(await page.getByTestId('report-regenerate-error').count()).toBe(0);
        expect(await report.count()).toBe(1);
        expect(await report.getByTestId('report-summary').textContent()).toBe(WEEK_REPORT);
      });
    } finally {
      await context.close();
    }
  }, 120_000);

  it('is shown to a viewer as partial, without the button to write it', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'reports-this-week-viewer', async () => {
        await signIn(page, harness!.server.url, viewerToken);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/reports`);
        await page.locator('[data-testid="report-row"][data-kind="week"]').getByTestId('report-partial').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('report-this-week').count()).toBe(0);
      });
    } finally {
      await context.close();
    }
  }, 120_000);
});
