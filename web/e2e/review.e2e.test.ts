import { sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrialStore } from '../../src/trial/store/trial-store.js';
import type { TrialField, TrialRecord } from '../../src/trial/store/types.js';
import { waitFor } from '../../src/testing/wait-for.js';
import { buildConsole, launchBrowser, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The acceptance item: "An end-to-end browser test approves a review in the console and sees the run
 * complete." Real server, database, pg-boss workers and SOP engine; the skill is a hard-rule node followed by
 * a human review, so no model call is needed. The console runs QC, watches the progress bar reach the end,
 * approves one record in the review queue and follows that run to COMPLETED.
 *
 * Set E2E_SCREENSHOT_DIR to keep a screenshot of every trial page in English and Chinese.
 */

const ADMIN_TOKEN = 'e2e-admin-token-review-0123456789abcdef';
// Not the shipped demo project (demo-htn-01), which the server may load on first start.
const PROJECT_ID = 'e2e-qc';
// A trial with a queue the size of the issue 32 report's (141 records waiting for review).
const BIG_PROJECT_ID = 'e2e-queue';
const BIG_QUEUE = 141;
const SKILL_ID = 'vitals-review';
const SKILL = `
id: ${SKILL_ID}
name: Vital signs review
description: Range checks on age and systolic blood pressure; a data manager confirms each violation before queries go to the site.
projects: [${PROJECT_ID}, ${BIG_PROJECT_ID}]
schedule: "0 6 * * 1"
start_node: ranges
nodes:
  ranges:
    type: hard_rule
    rules:
      - { id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75 at enrolment" }
      - { id: sbp-range, field: sbp, severity: warning, logic: { and: [{ ">=": [{ var: sbp }, 80] }, { "<=": [{ var: sbp }, 200] }] }, message: "Systolic BP must be 80-200 mmHg" }
    on_pass: end_ok
    on_fail: review
  review:
    type: human_review
    description: A data manager confirms the violations before queries go to the site.
    on_approve: end_confirmed
    on_reject: end_rejected
`;

const field = (fieldName: string, fieldType: TrialField['fieldType'], label: string): TrialField => ({
  fieldName, formName: 'vitals', fieldType, label, choices: [], validationMin: null, validationMax: null, required: fieldName !== 'notes',
});

const row = (recordId: string, eventName: string, site: string, age: number | null, sbp: number): TrialRecord => ({
  recordId, eventName, site, data: { record_id: recordId, age, sbp, notes: null },
});

// S1 passes; S2 is too old, S3 has an implausible SBP, S4 both: three runs stop for review.
const RECORDS: TrialRecord[] = [
  row('S1', 'baseline', 'SITE-01', 40, 120),
  row('S2', 'baseline', 'SITE-01', 90, 130),
  row('S2', 'week_4', 'SITE-01', null, 126),
  row('S3', 'baseline', 'SITE-02', 50, 230),
  row('S4', 'baseline', 'SITE-02', 16, 250),
];

/** The server with a skill folder in its data folder and the trial project seeded through its own store. */
async function startReviewHarness(): Promise<Harness> {
  // No node of the skill calls the model; it is configured so the console shows no "LLM missing" banner.
  const harness = await startHarness({
    name: 'review',
    adminToken: ADMIN_TOKEN,
    fallback: { reply: '{"passed": true, "reason": "ok", "confidence": 0.9}' },
    skills: { [SKILL_ID]: SKILL },
  });
  const store = createTrialStore(harness.server.ctx.db);
  await store.ensureProject({ id: PROJECT_ID, name: 'E2E hypertension study' }, 'e2e');
  await store.replaceDictionary(PROJECT_ID, [field('record_id', 'text', 'Record ID'), field('age', 'integer', 'Age'), field('sbp', 'integer', 'Systolic BP'), field('notes', 'text', 'Notes')], 'e2e');
  await store.replaceEvents(PROJECT_ID, [
    { eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 },
    { eventName: 'week_4', label: 'Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3 },
  ], 'e2e');
  await store.importRecords(PROJECT_ID, RECORDS, { actor: 'e2e', reason: 'Initial REDCap export' });
  // A correction, so the record's audit trail has an old -> new value to show.
  await store.importRecords(PROJECT_ID, [row('S2', 'week_4', 'SITE-01', null, 128)], { actor: 'site-crc', reason: 'Transcription error corrected from source' });
  await store.ensureProject({ id: BIG_PROJECT_ID, name: 'E2E long review queue' }, 'e2e');
  await store.replaceDictionary(BIG_PROJECT_ID, [field('record_id', 'text', 'Record ID'), field('age', 'integer', 'Age'), field('sbp', 'integer', 'Systolic BP'), field('notes', 'text', 'Notes')], 'e2e');
  await store.replaceEvents(BIG_PROJECT_ID, [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'e2e');
  // Every record breaks both rules: an age finding and an SBP finding each.
  await store.importRecords(BIG_PROJECT_ID, Array.from({ length: BIG_QUEUE }, (_, i) => row(`Q${String(i + 1).padStart(3, '0')}`, 'baseline', 'SITE-01', 90, 250)), { actor: 'e2e' });
  return harness;
}

const byTestId = (page: Page, testId: string, attributes = '') => page.locator(`[data-testid="${testId}"]${attributes}`);

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([launchBrowser(), startReviewHarness()]);
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

describe('trial QC in the console', () => {
  it('runs a skill, approves a review and sees the run complete', async () => {
    const { server } = harness!;
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'trial-review', async () => {
        await page.goto(`${server.url}/`);
        await page.getByTestId('token-input').fill(ADMIN_TOKEN);
        await page.getByTestId('sign-in-submit').click();
        await page.getByTestId('nav-trial').click();

        // The picker opens the first project; pick ours explicitly, whatever else the server holds.
        await page.getByTestId('trial-project-select').selectOption(PROJECT_ID);
        await page.waitForURL(new RegExp(`#/trial/${PROJECT_ID}/runs$`));
        const schedule = page.getByTestId(`skill-${SKILL_ID}`).getByTestId('skill-next-run');
        await schedule.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await schedule.textContent()).toMatch(/next run/);

        // Run QC and watch the live progress reach all four records.
        await page.getByTestId(`skill-run-${SKILL_ID}`).click();
        const progress = page.getByTestId('qc-run-progress').first();
        await progress.waitFor({ timeout: UI_TIMEOUT_MS });
        // Every record is checked, but three wait for a person: the run says so rather than "Completed".
        const waiting = byTestId(page, 'qc-run-status', '[data-status="waiting_review"]').first();
        await waiting.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await waiting.textContent()).toBe('Waiting for review (3)');
        expect(await progress.textContent()).toContain('4 / 4');
        expect(await page.getByTestId('qc-run-review-link').first().textContent()).toContain('3 to review');
        await snap(page, 'en-qc-runs');

        // The review queue holds the three failing records, not the passing one.
        await page.getByTestId('trial-tab-review').click();
        const item = page.getByTestId('review-item-S2');
        await item.waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('review-item-S4').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('review-item-S1').count()).toBe(0);
        await item.getByTestId('review-findings').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await item.textContent()).toContain('Age must be 18-75');
        // The reviewer sees what the SOP asks them to check.
        expect(await item.getByTestId('review-instruction').textContent()).toBe('A data manager confirms the violations before queries go to the site.');
        await snap(page, 'en-review-queue');

        await item.getByTestId('review-comment').fill('Age confirmed against the source document.');
        await item.getByTestId('review-approve').click();
        await item.getByTestId('review-outcome').waitFor({ timeout: UI_TIMEOUT_MS });

        // Follow the run: it resumes as a job and reaches its approve end.
        await item.getByTestId('review-outcome-link').click();
        const status = byTestId(page, 'task-run-status', '[data-status="COMPLETED"]');
        await status.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await status.textContent()).toBe('Completed');
        expect(await page.getByTestId('task-run-review').textContent()).toContain('Approved');
        expect(await page.getByTestId('task-run-step').last().textContent()).toContain('end_confirmed');
        await snap(page, 'en-task-run');

        // A reload of the queue no longer lists the approved record; the others still wait.
        await page.goto(`${server.url}/#/trial/${PROJECT_ID}/review`);
        await page.reload();
        await page.getByTestId('review-item-S3').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('review-item-S2').count()).toBe(0);

        // Another reviewer decides S3 while it is on screen: approving it here shows their state and drops it.
        const s3RunId = await page.getByTestId('review-item-S3').getAttribute('data-task-run-id');
        const elsewhere = await fetch(`${server.url}/api/iit/task-runs/${s3RunId}/review`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ decision: 'reject', comment: 'Site corrected the value.' }),
        });
        expect(elsewhere.status).toBe(200);
        await page.getByTestId('review-item-S3').getByTestId('review-approve').click();
        const conflict = page.getByTestId('review-conflict');
        await conflict.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await conflict.textContent()).toContain('not waiting for review');
        await page.waitForFunction(() => !document.querySelector('[data-testid="review-item-S3"]'), undefined, { timeout: UI_TIMEOUT_MS });
        await page.getByTestId('review-item-S4').waitFor({ timeout: UI_TIMEOUT_MS });
        await snap(page, 'en-review-conflict');

        // Queries: one per violation, filterable, and movable along the lifecycle with a comment.
        await page.getByTestId('trial-tab-queries').click();
        const rows = page.getByTestId('query-row');
        // The list may render once from an earlier load before the fresh one arrives: wait for the count.
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="query-row"]').length === 4, undefined, { timeout: UI_TIMEOUT_MS });
        expect(await rows.count()).toBe(4);
        await page.getByTestId('query-filter-site').selectOption('SITE-02');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="query-row"]').length === 3, undefined, { timeout: UI_TIMEOUT_MS });
        // The rejected review of S3 withdrew its query; the site never sees it.
        expect(await byTestId(page, 'query-row', '[data-status="cancelled"]').count()).toBe(1);
        // S4 still waits for its review: its two queries are held, and the site is offered nothing to answer.
        const held = byTestId(page, 'query-row', '[data-status="held"]');
        expect(await held.count()).toBe(2);
        expect(await held.first().getByTestId('query-status').textContent()).toBe('Held for review');
        expect(await held.first().getByTestId('query-action-answered').count()).toBe(0);
        // S2's review was approved, so its query reached the site (SITE-01) and can be answered.
        await page.getByTestId('query-filter-site').selectOption('SITE-01');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="query-row"]').length === 1, undefined, { timeout: UI_TIMEOUT_MS });
        const first = byTestId(page, 'query-row', '[data-status="open"]').first();
        await first.getByTestId('query-action-answered').click();
        expect(await page.getByTestId('query-confirm').isDisabled()).toBe(true);
        await page.getByTestId('query-comment').fill('Value re-measured at the site; source corrected.');
        await page.getByTestId('query-confirm').click();
        await byTestId(page, 'query-row', '[data-status="answered"]').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('query-filter-site').selectOption('');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="query-row"]').length === 4, undefined, { timeout: UI_TIMEOUT_MS });
        await snap(page, 'en-queries');

        // The record: data by event, its queries, and the audit trail with the corrected value.
        await page.goto(`${server.url}/#/trial/${PROJECT_ID}/records/S2`);
        const audit = page.getByTestId('record-audit-entry');
        await audit.first().waitFor({ timeout: UI_TIMEOUT_MS });
        const correction = audit.filter({ hasText: 'Transcription error corrected' });
        expect(await correction.textContent()).toMatch(/sbp\s*126\s*→\s*128/);
        // The record reads as a CRF: the flagged cell (age at baseline) shows its value and its query.
        const flagged = page.getByTestId('crf-cell-flagged');
        expect(await flagged.count()).toBe(1);
        expect(await flagged.getAttribute('data-field')).toBe('age');
        expect(await flagged.textContent()).toContain('90');
        expect(await page.getByTestId('query-row').first().textContent()).toContain('90');
        await snap(page, 'en-record');

        // The same pages in Chinese.
        await page.getByTestId('language-toggle').click();
        expect(await page.getByTestId('nav-trial').textContent()).toBe('试验质控');
        await snap(page, 'zh-record');
        for (const [name, hash] of [
          ['zh-qc-runs', `#/trial/${PROJECT_ID}/runs`],
          ['zh-queries', `#/trial/${PROJECT_ID}/queries`],
          ['zh-review-queue', `#/trial/${PROJECT_ID}/review`],
        ] as const) {
          await page.goto(`${server.url}/${hash}`);
          await page.getByTestId('trial-project-summary').waitFor({ timeout: UI_TIMEOUT_MS });
          await page.locator('[data-testid="qc-run-progress"], [data-testid="query-row"], [data-testid^="review-item-"]').first().waitFor({ timeout: UI_TIMEOUT_MS });
          await snap(page, name);
        }
      });
    } finally {
      await context.close();
    }
  });

  it('loads a review queue of 141 records in one request per page, decides per finding and in bulk, and offers a viewer no decision', async () => {
    const { server } = harness!;
    const started = await fetch(`${server.url}/api/iit/projects/${BIG_PROJECT_ID}/qc-runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ skillId: SKILL_ID }),
    });
    expect(started.status).toBe(202);
    const { id: qcRunId } = (await started.json()) as { id: string };
    await waitFor(
      async () => ((await (await fetch(`${server.url}/api/iit/qc-runs/${qcRunId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { status: string }).status === 'waiting_review',
      'the QC run of 141 records to reach review',
      120_000,
      250,
    );
    const viewer = await server.ctx.users.create({ name: 'e2e-monitor', role: 'viewer' });
    await server.ctx.users.addMember(BIG_PROJECT_ID, viewer.user.id);

    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'review-queue-141', async () => {
        await page.goto(`${server.url}/`);
        await page.getByTestId('token-input').fill(ADMIN_TOKEN);
        await page.getByTestId('sign-in-submit').click();
        await page.getByTestId('nav-trial').click();
        await page.getByTestId('trial-project-select').selectOption(BIG_PROJECT_ID);
        await page.waitForURL(new RegExp(`#/trial/${BIG_PROJECT_ID}/runs$`));

        // The review page: one request for the page of runs with their findings, none per item.
        const requests: string[] = [];
        page.on('request', (request) => {
          if (request.url().includes('/api/iit/')) requests.push(new URL(request.url()).pathname);
        });
        await page.getByTestId('qc-run-progress').first().waitFor({ timeout: UI_TIMEOUT_MS });
        requests.length = 0;
        await page.getByTestId('trial-tab-review').click();
        await page.waitForFunction(() => document.querySelectorAll('[data-testid^="review-item-"] [data-testid="review-finding-sbp"]').length === 50, undefined, { timeout: UI_TIMEOUT_MS });
        // Issue 32: 50.8 s and 148 requests for 141 items. The time is measured by npm run bench:review-page (a wall
        // clock on a shared machine proves nothing); what made it slow, a request per item, is checked here.
        // The queue's count in the tab may have fetched the same page already; nothing is fetched per item (was 148 requests).
        expect(requests.filter((url) => url.endsWith('/task-runs')).length).toBeLessThanOrEqual(3);
        expect(requests.filter((url) => url.includes('/queries') || url.includes('/api/iit/task-runs/'))).toHaveLength(0);
        expect(requests.length).toBeLessThan(8);
        expect(await page.getByTestId('review-total').textContent()).toContain(`${BIG_QUEUE} records wait for review`);
        expect(await page.getByTestId('review-pager-page').textContent()).toBe('Page 1 of 3');

        const shown = await page.locator('[data-testid^="review-item-"]').evaluateAll((items) => items.map((item) => item.getAttribute('data-testid')!.slice('review-item-'.length)));
        expect(shown).toHaveLength(50);
        const [firstId, secondId, thirdId] = shown as [string, string, string];
        // The first record: its age finding rejected, its SBP finding approved, one request each.
        const q1 = page.getByTestId(`review-item-${firstId}`);
        await q1.getByTestId('review-finding-age').getByTestId('review-finding-reject').click();
        await q1.getByTestId('review-finding-age').getByTestId('review-finding-decided').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await q1.getByTestId('review-finding-age').getByTestId('review-finding-decided').textContent()).toBe('Rejected, withdrawn');
        await q1.getByTestId('review-approve').click();
        await q1.getByTestId('review-outcome').waitFor({ timeout: UI_TIMEOUT_MS });
        const queries = (await (await fetch(`${server.url}/api/iit/projects/${BIG_PROJECT_ID}/queries?recordId=${firstId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { queries: Array<{ field: string; status: string }> };
        expect(Object.fromEntries(queries.queries.map((q) => [q.field, q.status]))).toEqual({ age: 'cancelled', sbp: 'open' });

        // Another reviewer decides the fourth record's age finding while this page shows it: deciding its SBP finding
        // here is refused, titled as a review that changed since it was loaded (not as data that changed).
        const q4 = page.getByTestId(`review-item-${shown[3]}`);
        const q4RunId = await q4.getAttribute('data-task-run-id');
        const q4AgeId = await q4.getByTestId('review-finding-age').getAttribute('data-query-id');
        const elsewhere = await fetch(`${server.url}/api/iit/projects/${BIG_PROJECT_ID}/reviews`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ decision: 'reject', items: [{ taskRunId: q4RunId, queryIds: [q4AgeId] }] }),
        });
        expect((await elsewhere.json()).results[0].status).toBe('partly_decided');
        await q4.getByTestId('review-finding-sbp').getByTestId('review-finding-approve').click();
        const changed = page.getByTestId('review-conflict');
        await changed.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await changed.textContent()).toContain('This review changed since you loaded it');
        expect(await changed.textContent()).toContain('someone else decided some of its findings');
        await changed.getByRole('button', { name: 'Dismiss' }).click();

        // Issue 32: the site corrects the fifth record while this page shows it, and approving it was titled
        // "Someone else decided first". Nobody else decided: the refusal says the record changed.
        const q5 = page.getByTestId(`review-item-${shown[4]}`);
        await createTrialStore(server.ctx.db).importRecords(BIG_PROJECT_ID, [row(shown[4]!, 'baseline', 'SITE-01', 91, 250)], { actor: 'site-crc', reason: 'Age re-entered from source' });
        await q5.getByTestId('review-approve').click();
        const dataChanged = page.getByTestId('review-conflict');
        await dataChanged.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await dataChanged.textContent()).toContain('This review changed since you loaded it');
        expect(await dataChanged.textContent()).not.toContain('Someone else decided first');
        expect(await dataChanged.textContent()).toContain(`record ${shown[4]} changed after the review was shown`);
        // Its run checks the new values, which still break both rules, and waits for review again (the last page's count below).
        await waitFor(
          async () => ((await (await fetch(`${server.url}/api/iit/projects/${BIG_PROJECT_ID}/task-runs?status=SUSPENDED&pageSize=500`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { taskRuns: Array<{ recordId: string }> }).taskRuns.some((run) => run.recordId === shown[4]),
          `the run of ${shown[4]} to wait for review again`,
        );

        // The next two ticked and rejected together with one comment, in one request.
        for (const recordId of [secondId, thirdId]) await page.getByTestId(`review-item-${recordId}`).getByTestId('review-select').check();
        expect(await page.getByTestId('review-selected').textContent()).toBe('2 records selected');
        await page.getByTestId('review-bulk-comment').fill('Ages entered in months at this site; corrected in the EDC.');
        const before = requests.length;
        await page.getByTestId('review-bulk-reject').click();
        for (const recordId of [secondId, thirdId]) await page.getByTestId(`review-item-${recordId}`).getByTestId('review-outcome').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(requests.slice(before).filter((url) => url.endsWith('/reviews'))).toHaveLength(1);
        await snap(page, 'en-review-queue-141');

        // Page 3 holds the last 41 records.
        await page.getByTestId('review-pager-last').click();
        await page.waitForFunction(() => document.querySelector('[data-testid="review-pager-page"]')?.textContent === 'Page 3 of 3', undefined, { timeout: UI_TIMEOUT_MS });
        await page.waitForFunction(() => document.querySelectorAll('[data-testid^="review-item-"]').length === 38, undefined, { timeout: UI_TIMEOUT_MS });
      });
    } finally {
      await context.close();
    }

    // A viewer sees the queue and the runs, but no decision, selection or Run QC is offered.
    const viewerContext = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const viewerPage = await viewerContext.newPage();
    try {
      await withScreenshot(viewerPage, 'review-queue-viewer', async () => {
        await viewerPage.goto(`${server.url}/`);
        await viewerPage.getByTestId('token-input').fill(viewer.token);
        await viewerPage.getByTestId('sign-in-submit').click();
        await viewerPage.getByTestId('nav-trial').waitFor({ timeout: UI_TIMEOUT_MS });
        await viewerPage.goto(`${server.url}/#/trial/${BIG_PROJECT_ID}/review`);
        await viewerPage.locator('[data-testid^="review-item-"]').first().waitFor({ timeout: UI_TIMEOUT_MS });
        for (const testId of ['review-approve', 'review-reject', 'review-select', 'review-bulk', 'review-finding-approve', 'review-comment']) {
          expect(await viewerPage.getByTestId(testId).count(), testId).toBe(0);
        }
        await viewerPage.goto(`${server.url}/#/trial/${BIG_PROJECT_ID}/runs`);
        await viewerPage.getByTestId(`skill-${SKILL_ID}`).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await viewerPage.getByTestId(`skill-run-${SKILL_ID}`).count()).toBe(0);
      });
    } finally {
      await viewerContext.close();
    }
  });

  it('shows an identifier field masked on the record page to a coordinator', async () => {
    const { server } = harness!;
    const note = 'Zhang San, 138-0013-8000';
    const crc = await server.ctx.users.create({ name: 'e2e-crc', role: 'coordinator' });
    await server.ctx.users.addMember(PROJECT_ID, crc.user.id);
    // REDCap "Identifier?" = y on the notes field, set in the table as an import of that column would.
    await server.ctx.db.execute(sql`UPDATE trial_fields SET identifier = true WHERE project_id = ${PROJECT_ID} AND field_name = 'notes'`);
    await createTrialStore(server.ctx.db).importRecords(PROJECT_ID, [{ ...row('S1', 'baseline', 'SITE-01', 40, 120), data: { record_id: 'S1', age: 40, sbp: 120, notes: note } }], { actor: 'site-crc' });
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'record-masked', async () => {
        await page.goto(`${server.url}/`);
        await page.getByTestId('token-input').fill(crc.token);
        await page.getByTestId('sign-in-submit').click();
        await page.getByTestId('nav-trial').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.goto(`${server.url}/#/trial/${PROJECT_ID}/records/S1`);
        const masked = page.getByTestId('record-masked-value');
        await masked.first().waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await masked.count()).toBe(1);
        expect(await masked.textContent()).toBe('••••');
        expect(await masked.getAttribute('title')).toContain('hidden for your role');
        // The age stays visible; the note appears nowhere on the page, audit trail included.
        expect(await page.getByTestId('crf').textContent()).toContain('40');
        expect(await page.content()).not.toContain('138-0013-8000');
        await snap(page, 'en-record-masked');
      });
    } finally {
      await context.close();
    }
  });
});
