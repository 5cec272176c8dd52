import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions, taskRuns } from '../../src/core/db/schema/trial.js';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * Rule yield on the Reports page: a rule whose eleven closed queries changed nothing is flagged for central review,
 * one whose only query is still open is not, and no query value reaches the page.
 */

const ADMIN_TOKEN = 'e2e-admin-token-rule-yield-0123456789ab';
const PROJECT_ID = 'demo-htn-01';

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
  harness = await startHarness({ name: 'rule-yield', adminToken: ADMIN_TOKEN, fallback: { reply: 'unused' } });
  const { db } = harness.server.ctx;
  const [run] = await db.insert(taskRuns).values({ projectId: PROJECT_ID, skillId: 'demo-core-checks', recordId: 'S001', status: 'COMPLETED', currentNode: 'end_flagged' }).returning();
  const query = (recordId: string, ruleId: string, status: 'open' | 'closed') => ({ projectId: PROJECT_ID, taskRunId: run!.id, recordId, eventName: 'v1_arm_1', nodeId: 'core_checks', ruleId, field: 'v1_arm_1.age', message: 'check', severity: 'warning' as const, value: 'value-never-shown', status });
  await db.insert(pendingActions).values([...Array.from({ length: 11 }, (_, i) => query(`S0${10 + i}`, 'noisy-rule', 'closed')), query('S001', 'quiet-rule', 'open')]);
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

describe('rule yield in the console', () => {
  it('flags a rule whose closed queries changed no data, with the hint to review it centrally', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'rule-yield', async () => {
        await signIn(page, harness!.server.url, ADMIN_TOKEN);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/reports`);
        const noisy = page.locator('[data-testid="rule-yield-row"][data-rule="noisy-rule"]');
        await noisy.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await noisy.getAttribute('data-low-yield')).toBe('true');
        expect(await noisy.getByTestId('rule-yield-value').textContent()).toContain('0%');
        expect(await noisy.getByTestId('rule-yield-low').textContent()).toBe('consider central review');
        const quiet = page.locator('[data-testid="rule-yield-row"][data-rule="quiet-rule"]');
        expect(await quiet.getAttribute('data-low-yield')).toBe('false');
        expect(await quiet.getByTestId('rule-yield-value').textContent()).toBe('—');
        expect(await page.getByTestId('rule-yield-hint').textContent()).toContain('1 rule changed data in under 20% of at least 10 closed queries');
        expect(await page.getByTestId('rule-yield').textContent()).not.toContain('value-never-shown');
      });
    } finally {
      await context.close();
    }
  }, 120_000);
});
