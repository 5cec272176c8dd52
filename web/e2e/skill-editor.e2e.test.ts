import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The skill editor: a data manager writes a skill with a misspelt field, Validate names it and suggests the
 * dictionary's name, the suggestion fixes the text, the draft is saved and activated without a restart, and the
 * Dry run button shows the route's answer (or its error). Then an amendment: the limit drops to 104.7 kg, Impact
 * names the changed rule and the two demo records above it at baseline (S077 105.0 kg, S071 104.8 kg), and once
 * version 2 is active the editor re-runs QC on just those two records. And a long skill: a YAML error on line 38 is
 * marked on line 38 (its number in the gutter, the underline and the lint marker side by side) after scrolling.
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

const BAD_LINE = '        message: Weight: above 207 kg';

/** 51 lines: ten weight limits of four lines each; line 38 (the seventh rule's message) is not YAML. */
function longSkill(): string {
  const head = ['# A long skill: ten weight limits', 'id: long-checks', 'name: Long checks', 'description: ten limits, to scroll', `projects: [${PROJECT_ID}]`, 'start_node: checks', 'nodes:', '  checks:', '    type: hard_rule', '    rules:'];
  const rules = Array.from({ length: 10 }, (_, i) => [
    `      - id: weight-max-${i + 1}`,
    '        field: v1_arm_1.weight_kg',
    `        logic: { "<=": [{ var: v1_arm_1.weight_kg }, ${201 + i}] }`,
    `        message: "Weight above ${201 + i} kg"`,
  ]).flat();
  const lines = [...head, ...rules, '    on_pass: end_ok', '    on_fail: end_flagged'];
  lines[37] = BAD_LINE;
  return `${lines.join('\n')}\n`;
}

/** The vertical middle of an element on screen, to compare rows of the editor and its gutters. */
async function middleOf(locator: Locator): Promise<number> {
  const box = await locator.boundingBox();
  expect(box).not.toBeNull();
  return box!.y + box!.height / 2;
}

/** The editor's text as shown (CodeMirror draws each line as an element; a short skill is all on screen). */
const shownText = (page: Page) => page.locator('.cm-content .cm-line').allTextContents().then((lines) => lines.join('\n'));

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
        // The new-skill template names a field of this trial once its dictionary has been read; a user replaces it
        // after it has appeared (it is swapped in only while nothing was typed).
        await page.locator('.cm-content', { hasText: '# A new QC skill for demo-htn-01' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await editor.fill(SKILL);
        expect(await shownText(page)).toContain('{ var: v1_arm_1.weigth_kg }');

        await page.getByTestId('skill-validate').click();
        // The problems first (a failure then says what was found instead), then the suggestion they offer.
        await page.locator('[data-testid="skill-problems"][data-valid]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('skill-problems').textContent()).toContain('rule "weight-max" (node checks) reads unknown field "weigth_kg" of event "v1_arm_1"');
        const suggestion = page.getByTestId('skill-suggestion');
        await suggestion.waitFor({ timeout: UI_TIMEOUT_MS });
        await suggestion.click();
        expect(await shownText(page)).toContain('{ var: v1_arm_1.weight_kg }');
        await page.getByTestId('skill-validate').click();
        await page.locator('[data-testid="skill-problems"][data-valid="true"]').waitFor({ timeout: UI_TIMEOUT_MS });

        await page.getByTestId('skill-save').click();
        await page.waitForURL(/#\/trial\/demo-htn-01\/skills\/weight-checks$/, { timeout: UI_TIMEOUT_MS });
        await page.getByTestId('skill-version-1').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await shownText(page)).toContain('# Weight plausibility at baseline');

        await page.getByTestId('skill-activate').click();
        await page.locator('[data-testid="skill-outcome"]', { hasText: 'Version 1 is active' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.locator('[data-testid="skill-item-weight-checks"][data-status="active"]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.locator('[data-testid="skill-version-1"]').getAttribute('data-status')).toBe('active');

        await page.getByTestId('skill-dry-run').click();
        await page.locator('[data-testid="skill-dry-run-result"], [data-testid="skill-dry-run-error"]').first().waitFor({ timeout: UI_TIMEOUT_MS });

        // The amendment, measured before it is activated: one rule changed, the records whose verdict flips.
        await editor.fill(SKILL.replace('weigth_kg', 'weight_kg').replace('200] }, message: "Weight above 200 kg"', '104.7] }, message: "Weight above 104.7 kg"'));
        await page.getByTestId('skill-impact').click();
        const impact = page.getByTestId('skill-impact-result');
        await impact.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await impact.getByTestId('skill-impact-changed').textContent()).toContain('weight-max');
        expect(await impact.getByTestId('skill-impact-added').count()).toBe(0);
        expect(await impact.getByTestId('skill-impact-removed').count()).toBe(0);
        expect(await impact.getAttribute('data-affected')).toBe('2');
        expect(await impact.getByTestId('skill-impact-records').textContent()).toContain('Records whose verdict changes: 2 of 200 checked');
        // Each count says what it counts (issue 32: "the impact panel's two counts are unexplained").
        expect(await impact.getByTestId('skill-impact-records-hint').textContent()).toContain('checked with the active version and with the text in the editor');
        expect(await impact.getByTestId('skill-impact-queries-hint').textContent()).toContain('a re-run closes those of removed rules');
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

  it('marks a YAML error on line 38 of a long skill on line 38 after scrolling, and starts a new skill from a field the trial has', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'skill-editor-long', async () => {
        await signIn(page, harness!.server.url, ADMIN_TOKEN);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/skills`);
        const editor = page.getByTestId('skill-editor');
        await editor.waitFor({ timeout: UI_TIMEOUT_MS });

        // The template names a field of this trial's dictionary, so it validates as it stands.
        await page.waitForFunction(() => /field: \w+/.test(document.querySelector('.cm-content')?.textContent ?? '') && !(document.querySelector('.cm-content')?.textContent ?? '').includes('your_field'), undefined, { timeout: UI_TIMEOUT_MS });
        await page.getByTestId('skill-validate').click();
        await page.locator('[data-testid="skill-problems"][data-valid="true"]').waitFor({ timeout: UI_TIMEOUT_MS });

        await editor.fill(longSkill());
        await page.getByTestId('skill-validate').click();
        const problem = page.locator('[data-testid="skill-problem"][data-line="38"]').first();
        await problem.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await problem.textContent()).toContain('line 38');

        // Scrolled to the end, as the reporter scrolled: line 38 is on screen, below where the editor started.
        const scroller = page.locator('.skill-editor-frame .cm-scroller');
        await scroller.evaluate((element) => (element.scrollTop = element.scrollHeight));
        expect(await scroller.evaluate((element) => element.scrollTop)).toBeGreaterThan(0);
        const marked = page.locator('.cm-content .cm-line', { has: page.locator('.cm-lintRange-error') }).first();
        await marked.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await marked.textContent()).toBe(BAD_LINE);
        const number = page.locator('.cm-lineNumbers .cm-gutterElement').filter({ hasText: /^38$/ });
        const marker = page.locator('.cm-gutter-lint .cm-gutterElement', { has: page.locator('.cm-lint-marker-error') }).first();
        const row = await middleOf(marked);
        expect(Math.abs((await middleOf(number)) - row)).toBeLessThan(2);
        expect(Math.abs((await middleOf(marker)) - row)).toBeLessThan(2);
        await snap(page, 'en-skill-editor-line-38');

        // Back to the top, then the problem's line button brings line 38 back into view.
        await scroller.evaluate((element) => (element.scrollTop = 0));
        await problem.getByTestId('skill-problem-line').click();
        await page.locator('.cm-activeLine', { hasText: BAD_LINE.trim() }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(Math.abs((await middleOf(number)) - (await middleOf(marked)))).toBeLessThan(2);
      });
    } finally {
      await context.close();
    }
  }, 120_000);

  it('offers no fix in the editor to a writer reading a skill for every trial, which only admins change', async () => {
    const { server } = harness!;
    const platform = SKILL.replace(`projects: [${PROJECT_ID}]\n`, '').replace('id: weight-checks', 'id: platform-weights');
    const created = await fetch(`${server.url}/api/iit/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ yaml: platform }),
    });
    expect(created.ok, await created.clone().text()).toBe(true);
    const coordinator = await server.ctx.users.create({ name: 'site-coordinator', role: 'coordinator' });
    await server.ctx.users.addMember(PROJECT_ID, coordinator.user.id);
    const { token } = await server.ctx.users.issueToken(coordinator.user.id, { label: 'e2e' });

    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await signIn(page, server.url, token);
      await page.goto(`${server.url}/#/trial/${PROJECT_ID}/skills/platform-weights`);
      await page.locator('.cm-content', { hasText: 'weigth_kg' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByTestId('skill-validate').click();
      await page.locator('[data-testid="skill-problems"][data-valid]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('skill-suggestion').count()).toBe(0);
      // The mark's tooltip says what is wrong, with no button that would change the text.
      await page.locator('.cm-lintRange-error').first().hover();
      const tooltip = page.locator('.cm-tooltip-lint');
      await tooltip.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await tooltip.textContent()).toContain('unknown field "weigth_kg"');
      expect(await tooltip.locator('.cm-diagnosticAction').count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);
});
