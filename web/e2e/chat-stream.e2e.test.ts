import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedStep } from '../../src/testing/scripted-model.js';
import { waitFor } from '../../src/testing/wait-for.js';
import { buildConsole, launchBrowser, openScenarioChat, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The chat streams its answer: text shows while the model is still writing, the final result replaces it, and
 * Stop ends the run on the server, whose trace is then marked cancelled. The model holds its answer after the first
 * pieces (stallAfterChunks), so the browser is seen between the first token and the end however slow the machine;
 * the first test then lets it go on (stream.resume()), the second stops it there.
 */

const ADMIN_TOKEN = 'e2e-admin-token-stream-0123456789abcdef';
const SUMMARY = 'Visit 2 is 80% complete across the three sites; two subjects lack a consent date.';
const SLOW: ScriptedStep = {
  reply: JSON.stringify({ summary: SUMMARY, completion_rate: 0.8, issues: [], action_items: [] }),
  // 12 pieces of 3: `{"summary":"` and the summary's first words, then held until the test resumes it.
  stream: { pieceChars: 3, stallAfterChunks: 12 },
};
const VERY_SLOW: ScriptedStep = {
  reply: JSON.stringify({ summary: 'This answer is stopped long before it ends. '.repeat(30) }),
  stream: { pieceChars: 2, stallAfterChunks: 20 },
};

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
  harness = await startHarness({ name: 'chat-stream', adminToken: ADMIN_TOKEN, steps: [SLOW, VERY_SLOW], fallback: { reply: '{"summary": "unexpected extra call"}' } });
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

const openDataCompleteness = (page: Page) => openScenarioChat(page, harness!.server.url, ADMIN_TOKEN, 'data-completeness');

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${harness!.server.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

describe('chat streaming', () => {
  it('shows the answer text while it arrives, then the final result in its place', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'stream-text', async () => {
        await openDataCompleteness(page);
        const calls = harness!.model.requests.length;
        await page.getByTestId('chat-input').fill('How complete is visit 2?');
        await page.getByTestId('chat-send').click();

        // The summary field is shown as it is written, before the run has finished (the model holds the rest).
        await page.getByTestId('streaming-text').filter({ hasText: 'Visit 2 is' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('answer').count()).toBe(0);
        expect(await page.getByTestId('chat-stop').isVisible()).toBe(true);
        const partial = (await page.getByTestId('streaming-text').textContent()) ?? '';
        expect(SUMMARY.startsWith(partial)).toBe(true);
        expect(partial).not.toContain('{');

        harness!.model.requests[calls]!.stream!.resume();
        const answer = page.getByTestId('answer').filter({ hasText: SUMMARY });
        await answer.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await answer.getByTestId('answer-status').textContent()).toBe('Success');
        expect(await page.getByTestId('streaming-answer').count()).toBe(0);
        expect(await page.getByTestId('chat-stop').count()).toBe(0);
      });
    } finally {
      await context.close();
    }
  });

  it('stops the answer with Stop, and the run trace is marked cancelled', async () => {
    const context = await browser.newContext({ locale: 'zh-CN' });
    const page = await context.newPage();
    const { model } = harness!;
    try {
      await withScreenshot(page, 'stream-stop', async () => {
        await openDataCompleteness(page);
        const calls = model.requests.length;
        await page.getByTestId('chat-input').fill('检查第 2 次访视的完整性');
        await page.getByTestId('chat-send').click();
        await page.getByTestId('streaming-text').filter({ hasText: 'This answer' }).waitFor({ timeout: UI_TIMEOUT_MS });

        await page.getByTestId('chat-stop').click();

        await page.getByTestId('stream-stopped').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('stream-stopped').textContent()).toBe('已停止');
        expect(await page.getByTestId('streaming-text').textContent()).toContain('This answer');
        expect(await page.getByTestId('answer').count()).toBe(0);
        // The composer is free again for the next question.
        expect(await page.getByTestId('chat-stop').count()).toBe(0);

        await waitFor(async () => model.requests[calls]?.stream?.isClientGone, 'the server to stop reading the model', UI_TIMEOUT_MS, 50);
        const stream = model.requests[calls]!.stream!;
        expect(stream.chunksSent).toBeLessThan(stream.chunksPlanned);
        const { traces } = await api<{ traces: Array<{ id: string; name: string; status: string }> }>('/api/traces?limit=1');
        expect(traces[0]?.name).toBe('data-completeness');
        // The stopped answer names its trace, known from the stream's first event.
        expect(await page.getByTestId('stream-trace-id').textContent()).toBe(traces[0]!.id);
        const trace = await waitFor(async () => {
          const one = await api<{ status: string }>(`/api/traces/${traces[0]!.id}`);
          return one.status === 'cancelled' && one;
        }, 'the trace to be marked cancelled', UI_TIMEOUT_MS, 100);
        expect(trace.status).toBe('cancelled');
        expect(model.requests).toHaveLength(calls + 1);
      });
    } finally {
      await context.close();
    }
  });
});
