import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedModel, ScriptedStep } from '../../src/testing/scripted-model.js';
import { waitFor } from '../../src/testing/wait-for.js';
import { buildConsole, launchBrowser, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The console against the real server: real Fastify, database, ingestion and agent loop, with only the
 * model's words scripted. It drives the same paths a coordinator uses: paste a token or open the login
 * link, open the shipped protocol-qa scenario, ask, and read the answer with its cited protocol excerpt.
 */

const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdefghij';
const QUESTION = 'What is the primary endpoint of DEMO-HTN-01?';
const ANSWER = 'The primary endpoint is the change in seated office systolic blood pressure from baseline [1].';
const REPLY: ScriptedStep = {
  reply: JSON.stringify({ answer: ANSWER, citations: ['[1]'], confidence: 'high' }),
};
// Ingestion runs in a background job after start-up; on a slow runner it can take a while.
const INGEST_TIMEOUT_MS = 90_000;

// Any extra model call (a repair or a retry) gets the same reply, so the test pins the UI, not call counts.
const startConsoleHarness = (adminToken: string | undefined) => startHarness({ name: 'console', adminToken, steps: [REPLY], fallback: REPLY });

/** Polls the API (not the UI) until the shipped protocol has been ingested; returns its file name. */
async function waitForProtocolDocument(url: string, token: string): Promise<string> {
  return waitFor(
    async () => {
      const response = await fetch(`${url}/api/scenarios`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      const { scenarios } = (await response.json()) as { scenarios: Array<{ id: string; documents: Array<{ sourceFile: string }> }> };
      return scenarios.find((s) => s.id === 'protocol-qa')?.documents[0]?.sourceFile;
    },
    'protocol-qa to have its ingested document',
    INGEST_TIMEOUT_MS,
    500,
  );
}

async function askProtocolQuestion(page: Page, sourceFile: string, model: ScriptedModel): Promise<void> {
  await page.getByTestId('scenario-card-protocol-qa').click();
  // The scope picker lists the ingested protocol, so the run below is grounded in it.
  await page.getByTestId('scope-document').filter({ hasText: sourceFile }).waitFor({ timeout: UI_TIMEOUT_MS });

  await page.getByTestId('chat-input').fill(QUESTION);
  await page.getByTestId('chat-send').click();

  const answer = page.getByTestId('answer').filter({ hasText: ANSWER });
  await answer.waitFor({ timeout: UI_TIMEOUT_MS });
  expect(await page.getByTestId('run-error').count()).toBe(0);
  expect(await answer.getByTestId('answer-status').textContent()).toMatch(/Success|成功/);

  const references = answer.getByTestId('reference');
  expect(await references.count()).toBeGreaterThanOrEqual(1);
  expect(await references.first().textContent()).toContain(sourceFile);

  // The question reached the model together with the retrieved protocol text.
  const sent = JSON.stringify(model.requests.map((request) => request.body));
  expect(sent).toContain(QUESTION);

  // The trace of the run loads from GET /api/traces/:id.
  await answer.getByTestId('trace-toggle').click();
  await answer.getByTestId('trace-panel').waitFor({ timeout: UI_TIMEOUT_MS });
}

let browser: Browser;

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('console with a pasted admin token', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startConsoleHarness(ADMIN_TOKEN);
  });

  afterAll(async () => {
    await stopHarness(harness);
  });

  it('signs in with a pasted token and answers a protocol question with a cited reference', async () => {
    const { server, model } = harness!;
    const sourceFile = await waitForProtocolDocument(server.url, ADMIN_TOKEN);
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'pasted-token', async () => {
        await page.goto(`${server.url}/`);
        await page.getByTestId('token-input').fill(ADMIN_TOKEN);
        await page.getByTestId('sign-in-submit').click();
        await page.getByTestId('scenario-card-protocol-qa').waitFor({ timeout: UI_TIMEOUT_MS });
        // The agent list reads GET /api/agents: an admin sees the agents that run inside features too.
        await page.getByTestId('agent-soft_rule').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('agent-dermatology_consult').textContent()).toContain('JSON decision');
        // The scripted model is configured, so the console must not warn about a missing LLM.
        expect(await page.getByTestId('llm-warning').count()).toBe(0);
        expect(await page.evaluate(() => localStorage.getItem('clinagent.token'))).toBe(ADMIN_TOKEN);

        await askProtocolQuestion(page, sourceFile, model);

        await page.getByTestId('sign-out').click();
        await page.getByTestId('token-input').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.evaluate(() => localStorage.getItem('clinagent.token'))).toBeNull();
      });
    } finally {
      await context.close();
    }
  });

  it('returns to the sign-in screen with the server message when a token is rejected', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'rejected-token', async () => {
        await page.goto(`${harness!.server.url}/`);
        await page.getByTestId('token-input').fill('not-a-real-token-000000000000');
        await page.getByTestId('sign-in-submit').click();
        const notice = page.getByTestId('sign-in-notice');
        await notice.waitFor({ timeout: UI_TIMEOUT_MS });
        expect((await notice.textContent())?.trim().length).toBeGreaterThan(0);
        expect(await page.getByTestId('scenario-card-protocol-qa').count()).toBe(0);
      });
    } finally {
      await context.close();
    }
  });
});

describe('console opened from the first-start login link', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    // Without CLINAGENT_ADMIN_TOKEN an empty database gets an admin with a one-time login link.
    harness = await startConsoleHarness(undefined);
  });

  afterAll(async () => {
    await stopHarness(harness);
  });

  it('exchanges the login code, stores the token and removes the code from the address bar', async () => {
    const { server } = harness!;
    expect(server.loginUrl).toBeDefined();
    const code = new URL(server.loginUrl!).searchParams.get('login');
    const context = await browser.newContext({ locale: 'zh-CN' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'login-link', async () => {
        await page.goto(`${server.url}/?login=${encodeURIComponent(code ?? '')}`);
        await page.getByTestId('scenario-card-protocol-qa').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(new URL(page.url()).searchParams.has('login')).toBe(false);
        const token = await page.evaluate(() => localStorage.getItem('clinagent.token'));
        expect(token).toBeTruthy();
        // zh-CN browsers get the Chinese console by default.
        expect(await page.getByTestId('nav-scenarios').textContent()).toBe('场景');

        // The code is single-use: opening the same link again shows the server's reason on the sign-in screen.
        const second = await context.newPage();
        await second.goto(`${server.url}/`);
        await second.evaluate(() => localStorage.removeItem('clinagent.token'));
        await second.goto(`${server.url}/?login=${encodeURIComponent(code ?? '')}`);
        await second.getByTestId('sign-in-notice').waitFor({ timeout: UI_TIMEOUT_MS });
      });
    } finally {
      await context.close();
    }
  });
});
