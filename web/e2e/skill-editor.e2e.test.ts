import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The skill editor: a data manager writes a skill with a misspelt field, Validate names it and suggests the
 * dictionary's name, the suggestion fixes the text, the draft is saved and activated without a restart, and the
 * Dry run button shows the route's answer (or its error). Then an amendment: the limit drops to 104.7 kg, Impact
 * names the changed rule and the two demo records above it at baseline (S077 105.0 kg, S071 104.8 kg), and once
 * version 2 is active the editor re-runs QC on just those two records.
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
  it('validates, fixes a misspelt field from its suggestion, saves, activates and dry-runs a new skill, then re-runs what an amendment changes', async () => {
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

        // The amendment, measured before it is activated: one rule changed, the records whose verdict flips.
        await editor.fill((await editor.inputValue()).replace('200] }, message: "Weight above 200 kg"', '104.7] }, message: "Weight above 104.7 kg"'));
        await page.getByTestId('skill-impact').click();
        const impact = page.getByTestId('skill-impact-result');
        await impact.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await impact.getByTestId('skill-impact-changed').textContent()).toContain('weight-max');
        expect(await impact.getByTestId('skill-impact-added').count()).toBe(0);
        expect(await impact.getByTestId('skill-impact-removed').count()).toBe(0);
        expect(await impact.getAttribute('data-affected')).toBe('2');
        expect(await impact.getByTestId('skill-impact-records').textContent()).toContain('Records whose verdict changes: 2 of 200 checked');
        expect(await impact.getByTestId('skill-impact-sample').locator('a').allTextContents()).toEqual(['S071', 'S077']);
        expect(await page.getByTestId('skill-rerun-affected').count()).toBe(0);

        await page.getByTestId('skill-save').click();
        await page.getByTestId('skill-version-2').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('skill-activate').click();
        await page.locator('[data-testid="skill-outcome"]', { hasText: 'Version 2 is active' }).waitFor({ timeout: UI_TIMEOUT_MS });
        const rerun = page.getByTestId('skill-rerun-affected');
        await rerun.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await rerun.textContent()).toBe('Re-run QC on the 2 affected records');
        await rerun.click();
        const started = page.getByTestId('skill-rerun-started');
        await started.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await started.textContent()).toContain('QC run started on 2 records.');
        const runId = await started.getAttribute('data-run-id');
        expect(runId).toBeTruthy();
        await started.getByRole('link').click();
        await page.locator(`[data-testid="qc-run-row"][data-run-id="${runId}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
      });
    } finally {
      await context.close();
    }
  }, 180_000);
});
