import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, repoRoot, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * Issue 25's acceptance: "An end-to-end browser test creates a trial, imports a REDCap export with events, writes a
 * skill in the editor, dry-runs it, activates it, runs QC and reads the flagged cell on the record page." A data
 * manager's day in the console, by clicks and typing only: the API is read at the end to check what was written.
 *
 * The export is the longitudinal one under test-data/trial/odm (two arms, three visits each, five subjects). The rule
 * limits systolic BP at the arm 1 baseline visit to 140 mmHg: only record 102 (145) breaks it.
 */

const ADMIN_TOKEN = 'e2e-admin-token-qc-day-0123456789abcdef';
const PROJECT_ID = 'e2e-qc-day';
const SKILL_ID = 'baseline-bp';
const SBP_MESSAGE = 'Systolic BP at baseline above 140 mmHg';
const exportFile = (name: string) => ({ name, mimeType: 'text/csv', buffer: readFileSync(path.join(repoRoot, 'test-data', 'trial', 'odm', name)) });

/** The skill as the data manager types it, first with the field misspelt as `sbpp` (a key pressed twice). */
const skillYaml = (fieldName: string) => `# Blood pressure at the baseline visit
id: ${SKILL_ID}
name: Baseline blood pressure
projects: [${PROJECT_ID}]
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - id: sbp-baseline-max
        field: baseline_arm_1.sbp
        logic: { "<=": [{ var: baseline_arm_1.${fieldName} }, 140] }
        message: "${SBP_MESSAGE}"
        severity: warning
    on_pass: end_ok
    on_fail: end_flagged
`;

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([launchBrowser(), startHarness({ name: 'qc-day', adminToken: ADMIN_TOKEN, fallback: { reply: 'unused' } })]);
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

const text = async (locator: Locator) => (await locator.textContent({ timeout: UI_TIMEOUT_MS })) ?? '';

/** Waits until the element's text contains `expected`: the console may show an earlier answer before the fresh one. */
async function waitForText(page: Page, selector: string, expected: string): Promise<void> {
  await page.waitForFunction(([css, want]) => document.querySelector(css!)?.textContent?.includes(want!) === true, [selector, expected], { timeout: UI_TIMEOUT_MS });
}

describe("a data manager's QC day in the console", () => {
  it('creates a trial, imports a longitudinal REDCap export, writes, dry-runs and activates a skill, runs QC and reads the flagged cell', async () => {
    const { server } = harness!;
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    const api = <T>(route: string) => fetch(`${server.url}/api/iit/${route}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then(async (response) => (await response.json()) as T);
    try {
      await withScreenshot(page, 'qc-day', async () => {
        // A new trial, then its REDCap export: dictionary, records, events and arms.
        await signIn(page, server.url, ADMIN_TOKEN);
        await page.getByTestId('nav-trial').click();
        await page.getByTestId('new-trial').click();
        await page.getByTestId('new-trial-id').fill(PROJECT_ID);
        await page.getByTestId('new-trial-name').fill('E2E hypertension study, QC day');
        await page.getByTestId('new-trial-form').locator('button[type="submit"]').click();
        await page.waitForURL(new RegExp(`#/trial/${PROJECT_ID}/import$`), { timeout: UI_TIMEOUT_MS });

        await page.getByTestId('import-format-csv').check();
        await page.getByTestId('import-file-dictionary').setInputFiles(exportFile('dictionary.csv'));
        await page.getByTestId('import-file-records').setInputFiles(exportFile('records.csv'));
        await page.getByTestId('import-file-events').setInputFiles(exportFile('events.csv'));
        await page.getByTestId('import-file-arms').setInputFiles(exportFile('arms.csv'));
        await page.getByTestId('import-preview').click();
        const counts = page.getByTestId('import-preview-counts');
        await counts.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await text(page.getByTestId('import-verdict'))).toContain('No problems found');
        expect(await text(page.getByTestId('import-count-fields'))).toBe('11');
        expect(await text(page.getByTestId('import-count-rows'))).toBe('13');
        expect(await text(page.getByTestId('import-count-records'))).toBe('13 new · 0 changed · 0 unchanged');
        const perEvent = await text(page.getByTestId('import-rows-per-event'));
        expect(perEvent).toContain('baseline_arm_1');
        expect(perEvent).toContain('week4_arm_2');
        await snap(page, 'en-qc-day-import-preview');

        await page.getByTestId('import-run').click();
        expect(await text(page.getByTestId('import-done'))).toBe('Imported: 13 new, 0 changed, 0 unchanged record rows.');
        await waitForText(page, '[data-testid="trial-project-summary"]', '5 subjects');

        // The Skills tab: a new skill, written in the editor with a misspelt field.
        await page.getByTestId('trial-tab-skills').click();
        const editor = page.getByTestId('skill-editor');
        await editor.waitFor({ timeout: UI_TIMEOUT_MS });
        // Typed over the template once it names a field of the imported dictionary, as a user sees it.
        await page.locator('.cm-content', { hasText: `# A new QC skill for ${PROJECT_ID}` }).waitFor({ timeout: UI_TIMEOUT_MS });
        await editor.fill(skillYaml('sbpp'));
        await page.getByTestId('skill-validate').click();
        const suggestion = page.getByTestId('skill-suggestion');
        await suggestion.waitFor({ timeout: UI_TIMEOUT_MS });
        const problems = page.locator('[data-testid="skill-problems"][data-valid="false"]');
        expect(await text(problems)).toContain('reads unknown field "sbpp" of event "baseline_arm_1"; did you mean "sbp"?');
        expect(await text(suggestion)).toBe('Replace with "sbp"');
        await snap(page, 'en-qc-day-skill-problem');

        // The suggestion fixes the text; Validate then finds nothing.
        await suggestion.click();
        // The editor is CodeMirror: its text is its lines.
        expect((await page.locator('.cm-content .cm-line').allTextContents()).join('\n')).toContain('{ var: baseline_arm_1.sbp }');
        await page.getByTestId('skill-validate').click();
        const valid = page.locator('[data-testid="skill-problems"][data-valid="true"]');
        expect(await text(valid)).toContain('No problems found.');

        // Dry run over every record: only 102's baseline visit fires, and nothing is written.
        await page.getByTestId('skill-dry-run').click();
        const dryRun = page.getByTestId('skill-dry-run-result');
        await dryRun.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await dryRun.getAttribute('data-fired')).toBe('1');
        expect(await text(dryRun.locator('p').first())).toBe('Findings: 1 · records checked: 5');
        const firing = dryRun.locator('tbody tr');
        expect(await firing.count()).toBe(1);
        expect(await firing.locator('td').allTextContents()).toEqual(['102', 'baseline_arm_1', 'sbp-baseline-max', 'baseline_arm_1.sbp', SBP_MESSAGE, '145']);
        await snap(page, 'en-qc-day-dry-run');

        // Save the draft, then activate it.
        await page.getByTestId('skill-save').click();
        await page.waitForURL(new RegExp(`#/trial/${PROJECT_ID}/skills/${SKILL_ID}$`), { timeout: UI_TIMEOUT_MS });
        await page.getByTestId('skill-version-1').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.locator(`[data-testid="skill-item-${SKILL_ID}"][data-status="draft"]`).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('skill-activate').click();
        await page.locator('[data-testid="skill-outcome"]', { hasText: 'Version 1 is active; new QC runs use it.' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.locator(`[data-testid="skill-item-${SKILL_ID}"][data-status="active"]`).waitFor({ timeout: UI_TIMEOUT_MS });

        // QC runs: run the skill over every record and wait for the run to finish.
        await page.getByTestId('trial-tab-runs').click();
        await page.getByTestId(`skill-run-${SKILL_ID}`).click();
        const run = page.locator('[data-testid="qc-run-row"]', { hasText: SKILL_ID });
        const completed = run.locator('[data-testid="qc-run-status"][data-status="completed"]');
        await completed.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await text(completed)).toBe('Completed');
        expect(await text(run.getByTestId('qc-run-progress-text'))).toBe('5 / 5');
        await snap(page, 'en-qc-day-run');

        // Queries: the one query, opened on its record.
        await page.getByTestId('trial-tab-queries').click();
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="query-row"]').length === 1, undefined, { timeout: UI_TIMEOUT_MS });
        const query = page.getByTestId('query-row');
        expect(await text(query)).toContain(SBP_MESSAGE);
        await query.getByTestId('query-record-link').click();
        await page.waitForURL(new RegExp(`#/trial/${PROJECT_ID}/records/102$`), { timeout: UI_TIMEOUT_MS });

        // The record page: the flagged cell is 102's systolic BP at the baseline visit, with the query's message.
        await page.getByTestId('crf').waitFor({ timeout: UI_TIMEOUT_MS });
        const flagged = page.getByTestId('crf-cell-flagged');
        expect(await flagged.count()).toBe(1);
        expect(await flagged.getAttribute('data-field')).toBe('sbp');
        expect(await flagged.getAttribute('data-event')).toBe('baseline_arm_1');
        expect(await text(flagged)).toContain('145');
        const cellQuery = flagged.getByTestId('crf-cell-query');
        expect(await text(cellQuery)).toContain(SBP_MESSAGE);
        expect(await text(cellQuery)).toContain('Open');
        // Its column is the visit by its label, in the form that holds the field.
        const form = page.locator('[data-testid="crf-form"]', { has: flagged });
        expect(await form.getAttribute('data-form')).toBe('vitals');
        expect(await text(form.locator('[data-testid="crf-event"][data-event="baseline_arm_1"] [data-testid="crf-event-label"]'))).toBe('Baseline');
        await snap(page, 'en-qc-day-record');
      });

      // What was written, read back from the API: the active skill, one finished run, one open query on 102's baseline SBP.
      const { skills } = await api<{ skills: Array<{ id: string; status: string; version: number | null; draftVersion: number | null }> }>('skills');
      expect(skills.filter((skill) => skill.id === SKILL_ID).map(({ status, version, draftVersion }) => ({ status, version, draftVersion }))).toEqual([{ status: 'active', version: 1, draftVersion: null }]);
      const { qcRuns } = await api<{ qcRuns: Array<{ skillId: string; status: string; total: number; completed: number; failed: number }> }>(`projects/${PROJECT_ID}/qc-runs`);
      expect(qcRuns.map(({ skillId, status, total, completed, failed }) => ({ skillId, status, total, completed, failed }))).toEqual([{ skillId: SKILL_ID, status: 'completed', total: 5, completed: 5, failed: 0 }]);
      const { queries } = await api<{ queries: Array<{ recordId: string; eventName: string; field: string; message: string; status: string }> }>(`projects/${PROJECT_ID}/queries`);
      expect(queries.map(({ recordId, eventName, field, message, status }) => ({ recordId, eventName, field, message, status }))).toEqual([
        { recordId: '102', eventName: 'baseline_arm_1', field: 'baseline_arm_1.sbp', message: SBP_MESSAGE, status: 'open' },
      ]);
    } finally {
      await context.close();
    }
  }, 180_000);
});
