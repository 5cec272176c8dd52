import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type RecordedRequest, type ScriptedModel, type ScriptedStep } from '../../src/testing/scripted-model.js';
import { buildConsole, launchBrowser, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * Issue 31 in the console: safety that holds whatever the model does. The model is down (it answers 500) while a
 * patient describes an emergency: the page shows the advice to seek care now and a plain sentence, never an error
 * box or operator text. A changing mole the model calls harmless: the reply and the banner both lead with the
 * advice to see a dermatologist, and the reassurance is not shown. A pregnant patient the model offers isotretinoin:
 * the drug is taken out and a plain warning shows in its place.
 */

const ADMIN_TOKEN = 'e2e-admin-token-consult-safety-0123456789';

const MODEL_DOWN_MESSAGE = 'I have a high fever and a blistering rash spreading over my whole body, my lips are peeling';
const MOLE_MESSAGE = 'A mole on my back grew and darkened, it has an irregular edge and it bleeds.';
const PREGNANT_MESSAGE = 'I am 28 weeks pregnant and my acne is getting worse. What can I take for it?';
const SAFE_OPTION = 'Azelaic acid cream is an option you can use in pregnancy.';
const REASSURANCE = 'This is most likely harmless, no need to worry.';
const MOLE_QUESTION = 'Do you have other moles like it?';
/** What a patient must never read: codes, settings, endpoints, status numbers. */
const OPERATOR_TEXT = /LLM_|https?:\/\/|status code|\b5\d\d\b|Raise |endpoint/i;

const decide = (decision: Record<string, unknown>): ScriptedStep => ({ reply: JSON.stringify(decision) });

function lastSent(request: RecordedRequest): string {
  const messages: Array<{ role: string; content: unknown }> = request.body?.messages ?? [];
  const last = messages.at(-1)?.content;
  return typeof last === 'string' ? last : JSON.stringify(last ?? '');
}

/** The model's answer chosen by the patient's message, so each consult gets its own misbehaviour. */
function answerFor(request: RecordedRequest): ScriptedStep | undefined {
  const text = lastSent(request);
  if (text.includes(MODEL_DOWN_MESSAGE)) return { status: 500, body: { error: { message: 'upstream model crashed', type: 'server_error' } } };
  if (text.includes(PREGNANT_MESSAGE)) {
    // The model names a drug that harms an unborn child, against what it recorded itself.
    return decide({ thought: 'Acne in pregnancy.', action: 'respond', response: `The most effective treatment is isotretinoin 20 mg a day. ${SAFE_OPTION}`, quick_options: ['Start isotretinoin', 'Other options'], medical_context_update: { patient_info: { pregnant: true }, symptoms: ['acne'] } });
  }
  if (text.includes(MOLE_MESSAGE)) return decide({ thought: 'A naevus.', action: 'respond', response: `${REASSURANCE} ${MOLE_QUESTION}`, quick_options: ['Yes', 'No'] });
  return undefined;
}

let browser: Browser;
let harness: Harness | undefined;
let model: ScriptedModel | undefined;

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([
    launchBrowser(),
    startHarness({
      name: 'consult-safety',
      adminToken: ADMIN_TOKEN,
      respond: answerFor,
      fallback: decide({ thought: 'Unscripted.', action: 'respond', response: 'Could you tell me more?', quick_options: [] }),
      // One attempt: the test is about what the page shows once the model has failed, not about retry timing.
      env: () => ({ LLM_MAX_RETRIES: '0' }),
    }),
  ]);
  model = harness.model;
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

const riskBanner = (page: Page) => page.getByLabel('Risk level');
const recordPanel = (page: Page) => page.getByRole('complementary', { name: 'Consult record' });

async function startConsult(page: Page, title: string): Promise<void> {
  await page.getByLabel('Title (optional)').fill(title);
  await page.getByRole('button', { name: 'New consult' }).click();
  await page.getByTestId('consult-item').filter({ hasText: title }).and(page.locator('[aria-current="page"]')).waitFor({ timeout: UI_TIMEOUT_MS });
  await page.getByTestId('chat-input').waitFor({ timeout: UI_TIMEOUT_MS });
}

async function send(page: Page, message: string): Promise<void> {
  await page.getByTestId('chat-input').fill(message);
  await page.getByTestId('chat-send').click();
}

describe('the consult page when the model misbehaves', () => {
  it('shows the emergency advice and a plain sentence when the model is down, and the banner and the chat agree on a high risk', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'consult-model-down', async () => {
        await signIn(page, harness!.server.url, ADMIN_TOKEN);
        await page.getByTestId('nav-consult').click();
        await startConsult(page, 'Model down');
        await send(page, MODEL_DOWN_MESSAGE);

        const reply = page.getByTestId('consult-reply').filter({ hasText: 'Seek emergency care now' });
        await reply.waitFor({ timeout: UI_TIMEOUT_MS });
        const text = (await reply.textContent()) ?? '';
        expect(text).toMatch(/^⚠️ Seek emergency care now/);
        expect(text).toContain('Please send your message again in a few minutes.');
        expect(text).not.toMatch(OPERATOR_TEXT);
        expect(await page.getByTestId('consult-send-error').count()).toBe(0);
        // The advice is set apart as a warning; the sentence about the service is plain text under it.
        expect(await reply.getByTestId('consult-warning').allTextContents()).toEqual([expect.stringMatching(/^⚠️ Seek emergency care now/)]);

        const banner = riskBanner(page);
        await expect.poll(() => banner.getAttribute('data-level'), { timeout: UI_TIMEOUT_MS }).toBe('urgent');
        expect(await banner.getAttribute('role')).toBe('alert');
        expect(await banner.textContent()).toContain('Seek emergency care now');
        await snap(page, 'consult-model-down');
      });

      await withScreenshot(page, 'consult-high-risk', async () => {
        await startConsult(page, 'Changing mole');
        await send(page, MOLE_MESSAGE);
        const reply = page.getByTestId('consult-reply').filter({ hasText: MOLE_QUESTION });
        await reply.waitFor({ timeout: UI_TIMEOUT_MS });
        const text = (await reply.textContent()) ?? '';
        expect(text).toMatch(/^⚠️ See a dermatologist within two weeks/);
        expect(text).not.toContain('harmless');
        expect(text).not.toContain('no need to worry');

        const banner = riskBanner(page);
        await expect.poll(() => banner.getAttribute('data-level'), { timeout: UI_TIMEOUT_MS }).toBe('high');
        const advice = (await banner.locator('.risk-advice').textContent()) ?? '';
        expect(advice).toMatch(/^See a dermatologist within two weeks/);
        expect(text).toContain(advice);
        await snap(page, 'consult-high-risk');
      });

      await withScreenshot(page, 'consult-pregnant', async () => {
        await startConsult(page, 'Acne in pregnancy');
        await send(page, PREGNANT_MESSAGE);
        const reply = page.getByTestId('consult-reply').filter({ hasText: SAFE_OPTION });
        await reply.waitFor({ timeout: UI_TIMEOUT_MS });
        // The drug is gone from the answer and from the answers to tap; a plain warning stands in its place.
        expect((await reply.textContent())!.toLowerCase()).not.toContain('isotretinoin');
        const warning = reply.getByTestId('consult-warning');
        expect(await warning.allTextContents()).toEqual([expect.stringMatching(/^⚠️ A medicine in this answer is not suitable for you \(.*pregnan.*\)/)]);
        expect(await warning.isVisible()).toBe(true);
        const options = await page.getByRole('group', { name: 'Quick answers' }).getByRole('button').allTextContents().catch(() => []);
        expect(options.join(' ').toLowerCase()).not.toContain('isotretinoin');
        await recordPanel(page).locator('[data-path="patient_info.pregnant"]').waitFor({ timeout: UI_TIMEOUT_MS });
        await snap(page, 'consult-pregnant');
      });

      await withScreenshot(page, 'consult-model-down-recorded', async () => {
        // The turn the model could not answer was recorded: opened again, the consult loads it from the server.
        await page.getByTestId('consult-item').filter({ hasText: 'Model down' }).click();
        await page.getByTestId('consult-user-message').filter({ hasText: MODEL_DOWN_MESSAGE }).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('consult-reply').filter({ hasText: 'Seek emergency care now' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await expect.poll(() => riskBanner(page).getAttribute('data-level'), { timeout: UI_TIMEOUT_MS }).toBe('urgent');
      });

      // The model was asked once for the emergency (it failed; nothing retried it) and once for the mole.
      const calls = model!.requests.filter((request) => request.path.endsWith('/chat/completions'));
      const named = (request: RecordedRequest) => (lastSent(request).includes(MODEL_DOWN_MESSAGE) ? 'down' : lastSent(request).includes(MOLE_MESSAGE) ? 'mole' : lastSent(request).includes(PREGNANT_MESSAGE) ? 'pregnant' : 'other');
    expect(calls.map(named)).toEqual(['down', 'mole', 'pregnant']);
    } finally {
      await context.close();
    }
  });
});
