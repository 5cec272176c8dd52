import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The skill editor: a data manager writes a skill with a misspelt field, Validate names it and suggests the
 * dictionary's name, the suggestion fixes the text, the draft is saved and activated without a restart, and the
 * Dry run button shows the route's answer (or its error).
 */

const ADMIN_TOKEN = 'e2e-admin-token-skill-editor-0123456789';
const PROJECT_ID = 'demo-htn-01';
const SKILL = `# Weight plausibility at baseline
id: weight-checks
name: Weight checks
projects: [${PROJECT_ID}]
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - { id: weight-max, field: v1_arm_1.weight_kg, logic: { "<=": [{ var: v1_arm_1.weigth_kg }, 200] }, message: "Weight above 200 kg" }
    on_pass: end_ok
    on_fail: end_flagged
`;

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
  harness = await startHarness({ name: 'skill-editor', adminToken: ADMIN_TOKEN, fallback: { reply: 'unused' } });
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

describe('the skill editor', () => {
  it('validates, fixes a misspelt field from its suggestion, saves, activates and dry-runs a new skill', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'skill-editor', async () => {
        await signIn(page, harness!.server.url, ADMIN_TOKEN);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/skills`);
        const editor = page.getByTestId('skill-editor');
        await editor.waitFor({ timeout: UI_TIMEOUT_MS });
        await editor.fill(SKILL);

        await page.getByTestId('skill-validate').click();
        const suggestion = page.getByTestId('skill-suggestion');
        await suggestion.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('skill-problems').textContent()).toContain('rule "weight-max" (node checks) reads unknown field "weigth_kg" of event "v1_arm_1"');
        await suggestion.click();
        expect(await editor.inputValue()).toContain('{ var: v1_arm_1.weight_kg }');
        await page.getByTestId('skill-validate').click();
        await page.locator('[data-testid="skill-problems"][data-valid="true"]').waitFor({ timeout: UI_TIMEOUT_MS });

        await page.getByTestId('skill-save').click();
        await page.waitForURL(/#\/trial\/demo-htn-01\/skills\/weight-checks$/, { timeout: UI_TIMEOUT_MS });
        await page.getByTestId('skill-version-1').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await editor.inputValue()).toContain('# Weight plausibility at baseline');

        await page.getByTestId('skill-activate').click();
        await page.locator('[data-testid="skill-outcome"]', { hasText: 'Version 1 is active' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.locator('[data-testid="skill-item-weight-checks"][data-status="active"]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.locator('[data-testid="skill-version-1"]').getAttribute('data-status')).toBe('active');

        await page.getByTestId('skill-dry-run').click();
        await page.locator('[data-testid="skill-dry-run-result"], [data-testid="skill-dry-run-error"]').first().waitFor({ timeout: UI_TIMEOUT_MS });
      });
    } finally {
      await context.close();
    }
  }, 180_000);
});
