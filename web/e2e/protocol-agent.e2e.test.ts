import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedStep } from '../../src/testing/scripted-model.js';
import { waitFor } from '../../src/testing/wait-for.js';
import { buildConsole, launchBrowser, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The Protocol Agent in the console, against the real server, staged agent and database; only the model's words
 * are scripted. A researcher walks one protocol through the five stages: each message gets one model reply ending
 * in an <extracted_data> block, "Complete stage" is refused once while the PICO lacks its comparison (fixed in the
 * state panel's editor), the sample size comes from the calculator card ("Use in protocol"), and the finished draft
 * downloads as a DOCX.
 *
 * Set E2E_SCREENSHOT_DIR to keep a screenshot of each page.
 */

const ADMIN_TOKEN = 'e2e-admin-token-protocol-0123456789abcdef';

const QUESTION = 'In adults with resistant hypertension, does renal denervation lower office systolic blood pressure compared with a sham procedure at 6 months?';
const PICO_MESSAGE = 'Population: adults with resistant hypertension. Intervention: renal denervation. Outcome: change in office systolic blood pressure.';
const DESIGN_MESSAGE = 'A parallel-group randomised controlled trial, 1:1 allocation, double-blind, lasting 6 months.';
const ENDPOINT_MESSAGE = 'Primary endpoint: change in office systolic blood pressure, measured seated in clinic, at 6 months.';

const block = (data: unknown) => `\n<extracted_data>${JSON.stringify(data)}</extracted_data>`;

/**
 * One reply per message, chosen by the researcher's message rather than by call order, so the test pins what the
 * page shows and not how many calls the server makes. The first reply streams slowly, so the test sees it being
 * written.
 */
const REPLIES: Array<{ when: string; step: ScriptedStep }> = [
  {
    when: QUESTION,
    step: {
      reply: `That is a clear, answerable question: it names the population, the intervention, the comparison and the outcome. Complete the stage when you are happy with it.${block({ question: QUESTION })}`,
      // Held after its first pieces until the test resumes it, so the reply is seen while it is written.
      stream: { pieceChars: 6, stallAfterChunks: 6 },
    },
  },
  {
    when: PICO_MESSAGE,
    step: {
      reply: `Noted the population, intervention and outcome. What will the control group receive?${block({
        population: 'adults with resistant hypertension',
        intervention: 'renal denervation',
        outcome: 'change in office systolic blood pressure',
      })}`,
    },
  },
  {
    when: DESIGN_MESSAGE,
    step: {
      reply: `A double-blind parallel-group RCT suits a sham-controlled procedure.${block({
        type: 'parallel-group randomised controlled trial',
        allocation: '1:1',
        blinding: 'double-blind',
        duration: '6 months',
      })}`,
    },
  },
  {
    when: ENDPOINT_MESSAGE,
    step: {
      reply: `The primary endpoint matches the PICO outcome and the sample size calculation.${block({
        primary: { name: 'change in office systolic blood pressure', measure: 'measured seated in clinic', timepoint: '6 months' },
      })}`,
    },
  },
];

function lastUserText(request: RecordedRequest): string {
  const messages: Array<{ role: string; content: unknown }> = request.body?.messages ?? [];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

function respond(request: RecordedRequest): ScriptedStep | undefined {
  const text = lastUserText(request);
  return REPLIES.find((reply) => text.includes(reply.when))?.step;
}

let browser: Browser;
let harness: Harness | undefined;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([
    launchBrowser(),
    startHarness({ name: 'protocol', adminToken: ADMIN_TOKEN, respond, fallback: { reply: 'Could you tell me more?' } }),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

const statePanel = (page: Page) => page.getByRole('complementary', { name: 'Protocol state' });
const currentStage = (page: Page) => statePanel(page).locator('[aria-current="step"]');

/** Sends a message and waits for the final reply (the streamed text replaced by the response). */
async function say(page: Page, message: string, replyStart: string): Promise<void> {
  const replies = await page.getByTestId('protocol-reply').count();
  await page.getByTestId('chat-input').fill(message);
  await page.getByTestId('chat-send').click();
  await page.getByTestId('protocol-reply').nth(replies).filter({ hasText: replyStart }).waitFor({ timeout: UI_TIMEOUT_MS });
}

/** Completes the current stage and waits until the progress shows `next` as current. */
async function completeStage(page: Page, next: string): Promise<void> {
  await statePanel(page).getByRole('button', { name: 'Complete stage' }).click();
  await currentStage(page).filter({ hasText: next }).waitFor({ timeout: UI_TIMEOUT_MS });
}

describe('the Protocol Agent in the console', () => {
  it('walks a protocol from the idea through five stages to a DOCX draft', async () => {
    const context = await browser.newContext({ locale: 'en-US', acceptDownloads: true });
    const page = await context.newPage();
    const { server } = harness!;
    try {
      await withScreenshot(page, 'protocol-start', async () => {
        await signIn(page, server.url, ADMIN_TOKEN);
        await page.getByTestId('nav-protocol').click();
        await page.getByLabel('Title (optional)').fill('Renal denervation RCT');
        await page.getByRole('button', { name: 'New protocol' }).click();
        await page.getByTestId('protocol-item').filter({ hasText: 'Renal denervation RCT' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await currentStage(page).textContent()).toContain('Scientific question');
      });

      await withScreenshot(page, 'protocol-question', async () => {
        await page.getByTestId('chat-input').fill(QUESTION);
        await page.getByTestId('chat-send').click();
        // The reply shows while it is written, before the response ends the stream, and never its data block.
        const streaming = page.getByTestId('protocol-streaming').filter({ hasText: 'That is a clear' });
        await streaming.waitFor({ timeout: UI_TIMEOUT_MS });
        const partial = (await streaming.textContent()) ?? '';
        expect(partial).not.toContain('extracted_data');
        const held = await waitFor(async () => harness!.model.requests.find((r) => r.stream && r.stream.chunksSent === 6 && !r.stream.isComplete), 'the reply to be held after its first pieces', UI_TIMEOUT_MS, 20);
        held.stream!.resume();
        const reply = page.getByTestId('protocol-reply').filter({ hasText: 'Complete the stage when you are happy with it.' });
        await reply.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await reply.textContent()).not.toContain('extracted_data');
        // The state panel holds the question the researcher gave.
        await page.getByTestId('context-scientificQuestion').filter({ hasText: 'renal denervation lower office systolic' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await completeStage(page, 'PICO');
        expect(await statePanel(page).locator('[data-stage="scientific_question"]').getAttribute('data-state')).toBe('completed');
      });

      await withScreenshot(page, 'protocol-pico', async () => {
        await say(page, PICO_MESSAGE, 'What will the control group receive?');
        const pico = page.getByTestId('context-pico');
        await pico.locator('[data-path="population"]').filter({ hasText: 'adults with resistant hypertension' }).waitFor({ timeout: UI_TIMEOUT_MS });

        // The comparison is missing: the stage is refused, the issue is shown, and the stage stays.
        await statePanel(page).getByRole('button', { name: 'Complete stage' }).click();
        const issues = page.getByTestId('stage-issues');
        await issues.filter({ hasText: 'The comparison (C) is missing' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await snap(page, 'protocol-refused');
        expect(await currentStage(page).textContent()).toContain('PICO');

        // Fixed in the state panel's editor, then completed.
        await pico.getByRole('button', { name: 'Edit PICO' }).click();
        const editor = pico.getByRole('form', { name: 'Edit PICO' });
        await editor.getByLabel('Comparison').fill('Sham procedure');
        await editor.getByRole('button', { name: 'Save' }).click();
        await pico.locator('[data-path="comparison"]').filter({ hasText: 'Sham procedure' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await issues.count()).toBe(0);
        await completeStage(page, 'Study design');
      });

      let cardHref = '';
      await withScreenshot(page, 'protocol-design-and-sample-size', async () => {
        await say(page, DESIGN_MESSAGE, 'A double-blind parallel-group RCT');
        await page.getByTestId('context-studyDesign').filter({ hasText: 'parallel-group randomised controlled trial' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await completeStage(page, 'Sample size');

        // The sample size stage offers its calculator card under the conversation.
        const card = page.getByTestId('action-card').filter({ hasText: 'Sample size calculator' });
        await card.waitFor({ timeout: UI_TIMEOUT_MS });
        await card.getByRole('link', { name: /Open/ }).click();
        await page.getByRole('heading', { name: 'Sample size calculator' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(page.url()).toContain('#/protocol/calculator?');
        expect(page.url()).toContain('cardId=sample_size_calculator');

        const form = page.getByRole('form', { name: 'Sample size inputs' });
        // Two proportions under superiority offers the continuity correction the calculator has; two means does not.
        await form.getByLabel('Design').selectOption('two_proportions');
        await form.getByLabel(/^Continuity correction/).waitFor({ timeout: UI_TIMEOUT_MS });
        await form.getByLabel('Design').selectOption('two_means');
        expect(await form.getByLabel(/^Continuity correction/).count()).toBe(0);
        await form.getByLabel(/^Mean difference/).fill('5');
        await form.getByLabel('Standard deviation').fill('10');
        await form.getByRole('button', { name: 'Calculate' }).click();
        // d = 0.5 at two-sided alpha 0.05 and power 0.8: 64 per group (noncentral t).
        await page.getByTestId('calculator-total').filter({ hasText: '128' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('calculator-per-group').textContent()).toBe('64 / 64');
        await snap(page, 'protocol-calculator');

        await page.getByRole('button', { name: 'Use in protocol' }).click();
        const sampleSize = page.getByTestId('context-sampleSize');
        await sampleSize.locator('[data-path="total"]').filter({ hasText: '128' }).waitFor({ timeout: UI_TIMEOUT_MS });
        // The arms are named after the PICO, the calculator's raw inputs stay out of the panel.
        const arms = await sampleSize.locator('[data-path="perGroup"] li').allTextContents();
        expect(arms).toEqual(['Intervention (renal denervation): 64', 'Comparison (Sham procedure): 64']);
        expect(await sampleSize.locator('[data-path="inputs"]').count()).toBe(0);
        expect(await sampleSize.textContent()).not.toContain('meanDiff');
        expect(await currentStage(page).textContent()).toContain('Sample size');

        // The card now opens the calculator with the inputs the protocol recorded.
        cardHref = (await page.getByTestId('action-card').filter({ hasText: 'Sample size calculator' }).getByRole('link').getAttribute('href')) ?? '';
        expect(cardHref).toMatch(/^#\/protocol\/calculator\?/);
        expect(cardHref).toContain('meanDiff=5');
        await completeStage(page, 'Endpoints');
      });

      await withScreenshot(page, 'protocol-deep-link', async () => {
        // The card's link typed into the URL bar as a site path opens the same pre-filled calculator.
        await page.goto(`${server.url}${cardHref.slice(1)}`);
        const form = page.getByRole('form', { name: 'Sample size inputs' });
        await form.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await form.getByLabel(/^Mean difference/).inputValue()).toBe('5');
        expect(await form.getByLabel('Standard deviation').inputValue()).toBe('10');
        expect(new URL(page.url()).hash).toBe(cardHref);
        await page.getByRole('link', { name: /Back to the protocol/ }).click();
        await currentStage(page).filter({ hasText: 'Endpoints' }).waitFor({ timeout: UI_TIMEOUT_MS });
        // The page was loaded afresh: the earlier messages come from the protocol's conversation log.
        await page.getByTestId('earlier-user-message').filter({ hasText: DESIGN_MESSAGE }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('earlier-agent-message').filter({ hasText: 'What will the control group receive?' }).count()).toBe(1);
        expect(await page.getByTestId('earlier-agent-message').filter({ hasText: 'extracted_data' }).count()).toBe(0);
      });

      await withScreenshot(page, 'protocol-endpoints-and-export', async () => {
        await say(page, ENDPOINT_MESSAGE, 'The primary endpoint matches');
        await page.getByTestId('context-endpoints').locator('[data-path="primary.timepoint"]').filter({ hasText: '6 months' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await statePanel(page).getByRole('button', { name: 'Complete stage' }).click();
        await page.getByTestId('protocol-all-done').waitFor({ timeout: UI_TIMEOUT_MS });
        await snap(page, 'protocol-done');
        const states = await statePanel(page).locator('[data-stage]').evaluateAll((items) => items.map((item) => item.getAttribute('data-state')));
        expect(states).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
        expect(await page.getByTestId('spirit-count').textContent()).toMatch(/^\d+ of \d+ items covered$/);

        const [download] = await Promise.all([page.waitForEvent('download', { timeout: UI_TIMEOUT_MS }), statePanel(page).getByRole('button', { name: 'Download DOCX' }).click()]);
        expect(download.suggestedFilename()).toMatch(/\.docx$/);
        const file = await readFile((await download.path())!);
        expect(file.subarray(0, 2).toString('latin1')).toBe('PK');
      });

      // One model call per message, each answered from the script (none fell back).
      const calls = harness!.model.requests.filter((request) => request.path.endsWith('/chat/completions'));
      expect(calls.map((request) => REPLIES.findIndex((reply) => lastUserText(request).includes(reply.when)))).toEqual([0, 1, 2, 3]);
    } finally {
      await context.close();
    }
  });
});
