import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Shared by the browser tests: build the console, launch Debian's chromium, screenshot a failing step. */

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Generous for a slow CI runner; a passing step takes well under a second. */
export const UI_TIMEOUT_MS = 30_000;

const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A build older than this lock is from a crashed test process; it is taken over. */
const STALE_LOCK_MS = 120_000;

function newestMtimeMs(target: string): number {
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(target).map((name) => newestMtimeMs(path.join(target, name))));
}

function isConsoleBuildFresh(): boolean {
  const web = path.join(repoRoot, 'web');
  try {
    const built = statSync(path.join(web, 'dist', 'index.html')).mtimeMs;
    const sources = Math.max(newestMtimeMs(path.join(web, 'src')), newestMtimeMs(path.join(web, 'index.html')), newestMtimeMs(path.join(web, 'vite.config.ts')));
    return built > sources;
  } catch {
    return false;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The server serves web/dist, so a test builds it first: a stale bundle would test yesterday's console.
 * Test files run in parallel processes, and a second build empties web/dist while the first test's browser
 * loads it; so one process builds under a lock and the others find the bundle fresh and skip.
 * A child process keeps Vitest's NODE_ENV=test out of the production build.
 */
export function buildConsole(): void {
  const lock = path.join(tmpdir(), `clinagent-console-build-${createHash('sha1').update(repoRoot).digest('hex').slice(0, 12)}.lock`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      } catch {
        // The holder released the lock between the two calls; try again.
      }
      sleepSync(200);
    }
  }
  try {
    if (isConsoleBuildFresh()) return;
    const { NODE_ENV: _ignored, ...env } = process.env;
    execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], {
      cwd: repoRoot,
      env,
      stdio: 'inherit',
    });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** Runs a browser step and, when it fails, saves a screenshot and names it in the error. */
export async function withScreenshot(page: Page, name: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    const file = path.join(tmpdir(), `clinagent-e2e-${name}-${Date.now()}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    if (error instanceof Error) error.message += `\nScreenshot: ${file}`;
    throw error;
  }
}

/** With E2E_SCREENSHOT_DIR set, keeps a full-page screenshot of the page under `name`, to look at the console's pages. */
export async function snap(page: Page, name: string): Promise<void> {
  const dir = process.env.E2E_SCREENSHOT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** Signs in with a bearer token on the console's start page and waits for the signed-in header. */
export async function signIn(page: Page, serverUrl: string, token: string): Promise<void> {
  await page.goto(`${serverUrl}/`);
  await page.getByTestId('token-input').fill(token);
  await page.getByTestId('sign-in-submit').click();
  await page.getByTestId('nav-tokens').waitFor({ timeout: UI_TIMEOUT_MS });
}

/** Signs in with a bearer token and opens a scenario's chat, ready for a question. */
export async function openScenarioChat(page: Page, serverUrl: string, token: string, scenarioId: string): Promise<void> {
  await signIn(page, serverUrl, token);
  await page.getByTestId(`scenario-card-${scenarioId}`).click();
  await page.getByTestId('chat-input').waitFor({ timeout: UI_TIMEOUT_MS });
}
