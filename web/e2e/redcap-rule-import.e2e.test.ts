import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * Issue 32: REDCap Data Quality rules could not be imported from the console. A data manager uploads the rules
 * export on the new-skill page; the preview lists each rule as it would be imported or why not; a severity is picked
 * for the rule kept; Import puts the skill in the editor with that severity, and it saves as a draft.
 */

const ADMIN_TOKEN = 'e2e-admin-token-redcap-rules-0123456789';
const PROJECT_ID = 'demo-htn-01';
const RULES_CSV = [
  'rule_name,rule_logic,real_time_execution',
  '"Weight over 200 kg at baseline","[v1_arm_1][weight_kg] > 200",n',
  '"Under 18 today","datediff([dob], today(), ""y"") < 18",n',
].join('\n');

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
  harness = await startHarness({ name: 'redcap-rule-import', adminToken: ADMIN_TOKEN, fallback: { reply: 'unused' } });
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

describe('REDCap Data Quality rules imported from the console', () => {
  it('uploads the rules export, previews each rule, picks a severity per rule and imports into the editor', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'redcap-rule-import', async () => {
        await signIn(page, harness!.server.url, ADMIN_TOKEN);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/skills`);
        await page.getByTestId('skill-editor').waitFor({ timeout: UI_TIMEOUT_MS });

        await page.getByTestId('redcap-import-open').click();
        await page.getByTestId('redcap-import-skill-id').fill('site-dq');
        await page.getByTestId('redcap-import-name').fill('Site DQ rules');
        await page.getByTestId('redcap-import-file').setInputFiles({ name: 'DataQualityRules.csv', mimeType: 'text/csv', buffer: Buffer.from(RULES_CSV) });
        await page.getByTestId('redcap-import-preview').click();

        const rules = page.getByTestId('redcap-import-rules');
        await rules.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await rules.getAttribute('data-importable')).toBe('1');
        const kept = page.getByTestId('redcap-import-rule-1');
        expect(await kept.getAttribute('data-status')).toBe('importable');
        expect(await kept.textContent()).toContain('weight-over-200-kg-at-baseline');
        const refused = page.getByTestId('redcap-import-rule-2');
        expect(await refused.getAttribute('data-status')).toBe('refused');
        expect(await refused.textContent()).toContain('function "today"');
        expect(await page.getByTestId('redcap-import-severity-2').count()).toBe(0);

        await page.getByTestId('redcap-import-severity-1').selectOption('warning');
        expect(await page.getByTestId('redcap-import-run').textContent()).toBe('Import 1 rule');
        await page.getByTestId('redcap-import-run').click();
        await page.getByTestId('redcap-import-done').waitFor({ timeout: UI_TIMEOUT_MS });

        const shown = () => page.locator('.cm-content .cm-line').allTextContents().then((lines) => lines.join('\n'));
        await page.waitForFunction(() => (document.querySelector('.cm-content')?.textContent ?? '').includes('id: site-dq'), undefined, { timeout: UI_TIMEOUT_MS });
        const text = await shown();
        expect(text).toContain('# REDCap: [v1_arm_1][weight_kg] > 200');
        expect(text).toContain('severity: warning');
        expect(text).not.toContain('Under 18 today');

        await page.getByTestId('skill-save').click();
        await page.waitForURL(/#\/trial\/demo-htn-01\/skills\/site-dq$/, { timeout: UI_TIMEOUT_MS });
        await page.getByTestId('skill-version-1').waitFor({ timeout: UI_TIMEOUT_MS });
      });
    } finally {
      await context.close();
    }
  }, 180_000);

  it('names the new skill in the console\'s language', async () => {
    const context = await browser.newContext({ locale: 'zh-CN' });
    const page = await context.newPage();
    try {
      await signIn(page, harness!.server.url, ADMIN_TOKEN);
      await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/skills`);
      await page.getByTestId('redcap-import-open').click();
      expect(await page.getByTestId('redcap-import-name').inputValue()).toBe('REDCap 数据质量规则');
      expect(await page.getByTestId('redcap-import-skill-id').inputValue()).toBe('redcap-dq');
    } finally {
      await context.close();
    }
  }, 60_000);
});
