import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { hardRuleSkillYaml } from '../src/testing/skill-yaml.js';
import { createThrowawayDatabase } from '../src/testing/test-database.js';
import { createTrialStore } from '../src/trial/store/trial-store.js';
import { buildConsole, launchBrowser, signIn, UI_TIMEOUT_MS } from '../web/e2e/browser.js';
import { startHarness, stopHarness, type Harness } from '../web/e2e/harness.js';
import { printTable, summarise } from './stats.js';

/**
 * The review page of issue 32 in a real browser (before the fix: 50.8 s and 148 requests for 141 records waiting):
 * from the action until all 50 items of page 1 show their findings, (a) as a full page load of the review URL and
 * (b) as a click from the trial's runs tab to its review tab, with the /api/ requests each makes. A real server
 * (pg-boss workers, the built console) and Debian's chromium; the first sample of each is reported as cold. On the
 * embedded database, and on PostgreSQL (a throwaway database) when BENCH_DATABASE_URL or TEST_DATABASE_URL is set.
 */
const QUEUE = Number(process.env.REVIEW_BENCH_RECORDS ?? 141);
const SAMPLES = 10;
const PAGE_SIZE = 50;
const PROJECT = 'bench-review-page';
const SKILL_ID = 'bench-review-page';
const ADMIN_TOKEN = 'bench-admin-token-review-page-0123456789';
const BEFORE = { ms: 50_800, requests: 148 };
/** Requests still arriving this long after the items show (e.g. the tab's queue count) are counted with the load. */
const SETTLE_MS = 500;
// Age and systolic pressure, each finding decided by a data manager before its query goes to the site.
const SKILL = hardRuleSkillYaml(SKILL_ID, [
  '{ id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }',
  '{ id: sbp-range, field: sbp, logic: { and: [{ ">=": [{ var: sbp }, 80] }, { "<=": [{ var: sbp }, 200] }] }, message: "SBP must be 80-200" }',
], true);

/** `databaseUrl` absent: the embedded database in the harness's data folder. */
async function startReviewHarness(databaseUrl?: string): Promise<Harness> {
  // No node of the skill calls the model; the scripted one only keeps the console from showing "LLM missing".
  const harness = await startHarness({
    name: 'review-page-bench',
    adminToken: ADMIN_TOKEN,
    fallback: { reply: '{"passed": true, "reason": "ok", "confidence": 0.9}' },
    skills: { [SKILL_ID]: SKILL },
    ...(databaseUrl ? { env: () => ({ DATABASE_URL: databaseUrl }) } : {}),
  });
  const store = createTrialStore(harness.server.ctx.db);
  await store.ensureProject({ id: PROJECT, name: 'Bench review page' }, 'bench');
  await store.replaceDictionary(PROJECT, ['record_id', 'age', 'sbp'].map((fieldName) => ({ fieldName, formName: 'f', fieldType: fieldName === 'record_id' ? 'text' : 'integer', label: fieldName, choices: [], validationMin: null, validationMax: null, required: true })), 'bench');
  // Every record breaks both rules: an age finding and an SBP finding each.
  await store.importRecords(PROJECT, Array.from({ length: QUEUE }, (_, i) => ({ recordId: `R${String(i + 1).padStart(3, '0')}`, eventName: '', site: 'SITE-01', data: { record_id: `R${i + 1}`, age: 90, sbp: 250 } })), { actor: 'bench' });
  return harness;
}

/** Starts a QC run of the skill over the project through the HTTP API and waits until its runs wait for review. */
async function runQcToReview(serverUrl: string): Promise<void> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const started = await fetch(`${serverUrl}/api/iit/projects/${PROJECT}/qc-runs`, { method: 'POST', headers, body: JSON.stringify({ skillId: SKILL_ID }) });
  if (started.status !== 202) throw new Error(`starting the QC run: ${started.status} ${await started.text()}`);
  const { id } = (await started.json()) as { id: string };
  const deadline = Date.now() + 120_000;
  while (((await (await fetch(`${serverUrl}/api/iit/qc-runs/${id}`, { headers })).json()) as { status: string }).status !== 'waiting_review') {
    if (Date.now() > deadline) throw new Error(`the QC run of ${QUEUE} records did not reach review in 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // Every record breaks a rule, so the whole queue waits; a smaller one would time a lighter page.
  const { total } = (await (await fetch(`${serverUrl}/api/iit/projects/${PROJECT}/task-runs?status=SUSPENDED&pageSize=1`, { headers })).json()) as { total: number };
  if (total !== QUEUE) throw new Error(`expected ${QUEUE} runs waiting for review, found ${total}`);
}

/** Times `action` until page 1's items all show their SBP finding; counts the /api/ requests it made. */
async function timeToQueue(page: Page, action: () => Promise<unknown>): Promise<{ ms: number; requests: number }> {
  let requests = 0;
  const count = (request: { url(): string }) => {
    if (new URL(request.url()).pathname.startsWith('/api/')) requests++;
  };
  page.on('request', count);
  try {
    const at = performance.now();
    await action();
    // A string, as bench/ compiles without the DOM types; it runs in the page.
    await page.waitForFunction(`document.querySelectorAll('[data-testid^="review-item-"] [data-testid="review-finding-sbp"]').length === ${PAGE_SIZE}`, undefined, { timeout: UI_TIMEOUT_MS });
    const ms = performance.now() - at;
    await page.waitForTimeout(SETTLE_MS);
    return { ms, requests };
  } finally {
    page.off('request', count);
  }
}

type Sample = { ms: number; requests: number };

/** Both measures on one engine (`databaseUrl` absent: the embedded one), in one browser. */
async function benchEngine(browser: Browser, databaseUrl?: string): Promise<{ loads: Sample[]; switches: Sample[] }> {
  let harness: Harness | undefined;
  try {
    harness = await startReviewHarness(databaseUrl);
    const serverUrl = harness.server.url;
    await runQcToReview(serverUrl);
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    await signIn(page, serverUrl, ADMIN_TOKEN);
    const reviewUrl = `${serverUrl}/#/trial/${PROJECT}/review`;

    // (a) A full page load: from a blank page, so the review URL is a new document rather than a hash change.
    const loads: Sample[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      await page.goto('about:blank');
      loads.push(await timeToQueue(page, () => page.goto(reviewUrl)));
    }

    // (b) A tab switch: the runs tab shown first, then a click on the review tab.
    const switches: Sample[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      await page.getByTestId('trial-tab-runs').click();
      await page.getByTestId('qc-run-progress').first().waitFor({ timeout: UI_TIMEOUT_MS });
      await page.waitForTimeout(SETTLE_MS);
      switches.push(await timeToQueue(page, () => page.getByTestId('trial-tab-review').click()));
    }
    await context.close();
    return { loads, switches };
  } finally {
    await stopHarness(harness);
  }
}

export async function main(): Promise<void> {
  // The same lookup as launchBrowser's, checked first so a machine without chromium skips rather than fails.
  const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromiumPath)) {
    console.log(`Review page in the browser: skipped: set CHROMIUM_PATH or apt-get install chromium (no ${chromiumPath})`);
    return;
  }
  buildConsole();
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const results: Array<{ engine: string; loads: Sample[]; switches: Sample[] }> = [{ engine: 'pglite', ...(await benchEngine(browser)) }];
    if (serverUrl) {
      const database = await createThrowawayDatabase(serverUrl);
      try {
        results.push({ engine: 'postgres', ...(await benchEngine(browser, database.url)) });
      } finally {
        await database.drop();
      }
    }

    const rows = (name: string, samples: Sample[]) => {
      const [cold, ...warm] = samples;
      const s = summarise(warm.map((x) => x.ms));
      const requests = [...new Set(warm.map((x) => x.requests))].sort((a, b) => a - b).join('-');
      return [
        { measure: `${name}, cold (first)`, ms: cold!.ms.toFixed(0), requests: cold!.requests, 'vs before': `${(BEFORE.ms / cold!.ms).toFixed(0)}x faster` },
        { measure: `${name}, warm p50 / p99 (${warm.length})`, ms: `${s.p50.toFixed(0)} / ${s.p99.toFixed(0)}`, requests, 'vs before': `${(BEFORE.ms / s.p50).toFixed(0)}x faster (p50)` },
      ];
    };
    printTable(`Review page of a ${QUEUE}-record queue in chromium, until ${PAGE_SIZE} items show their findings`, [
      { measure: 'before the fix (issue 32)', ms: BEFORE.ms.toFixed(0), requests: BEFORE.requests, 'vs before': '1x' },
      ...results.flatMap(({ engine, loads, switches }) => [
        ...rows(`${engine}: (a) full page load of #/trial/<project>/review`, loads),
        ...rows(`${engine}: (b) tab switch runs -> review`, switches),
      ]),
    ]);
  } finally {
    await browser?.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await main();
