import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type RecordedRequest, type ScriptedModel, type ScriptedStep, type StreamOptions } from '../../src/testing/scripted-model.js';
import { waitFor } from '../../src/testing/wait-for.js';
import { buildConsole, launchBrowser, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The dermatology consult in the console, against the real server, consult agent, knowledge base and database; only
 * the models' words are scripted (one JSON decision per model call, and the vision model's description of the
 * photo). A patient describes a rash, taps a quick answer, sends a photo with a preview, and gets an assessment with
 * its risk level and a dossier to read and download. A second consult trips the safety check: the urgent advice the
 * server puts above the model's words replaces the streamed text, and the banner turns red with the red flags.
 *
 * Set E2E_SCREENSHOT_DIR to keep a screenshot of each page.
 */

const ADMIN_TOKEN = 'e2e-admin-token-consult-0123456789abcdef';

const FIRST_MESSAGE = 'I have an itchy red rash on my arm.';
const PHOTO_MESSAGE = 'Here is a photo of the patch.';
const URGENT_MESSAGE = '我发烧39度，全身起水疱，嘴里也溃烂了';
const RETRIED_MESSAGE = 'A dry patch on my elbow.';
const ASK_ELBOW = 'Is the patch on the elbow itchy or painful?';
const ASK_DURATION = 'Thank you. How long have you had the rash, and did anything seem to start it, such as gardening, a new soap or a pet?';
const ASK_PHOTO = 'Could you send a photo of the patch, so I can see its shape and edge?';
const DIAGNOSIS = 'This looks most like tinea corporis (ringworm), a fungal skin infection. A topical antifungal usually clears it; see a doctor if it spreads or has not improved in two weeks. I am not a replacement for a doctor.';
/** Only the vision model's answer contains it, so the decision after the image tool is told apart by it. */
const PHOTO_FINDING = 'ring-shaped plaque with a raised scaly border seen in the photo';

/** A 1x1 PNG: real bytes, so the server's check reads its signature and the browser can draw the preview. */
const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
/** The server's image limit in this test (its minimum), and a file over it: the refusal names both sizes. */
const IMAGE_MAX_BYTES = 1024;
const PNG_TOO_LARGE = Buffer.concat([PNG_1PX, Buffer.alloc(4096)]);

const decide = (decision: Record<string, unknown>, stream?: StreamOptions): ScriptedStep => ({ reply: JSON.stringify(decision), ...(stream ? { stream } : {}) });

/**
 * The decisions, chosen by what the consult sent last (the patient's message, or a tool's result) rather than by
 * call order, so the test pins what the page shows and which decision answered which step.
 */
const DECISIONS: Record<string, ScriptedStep> = {
  lookUp: decide({
    thought: 'An itchy red rash: look up the common causes first.',
    action: 'use_tool',
    tool: 'search_medical_knowledge',
    tool_input: { query: 'itchy red rash on the arm', specialty: 'dermatology' },
    medical_context_update: { symptoms: ['itchy red rash'], location: ['arm'] },
  }),
  // Held after its first pieces ('Thank you.' shown) until the test resumes it: the test sees the reply being
  // written before the result replaces it, however slow the machine.
  askDuration: decide(
    { thought: 'Need duration and triggers.', action: 'respond', response: ASK_DURATION, quick_options: ['Days', 'Weeks', 'Months'], medical_context_update: { missing_info: ['duration', 'triggers'] } },
    { pieceChars: 6, stallAfterChunks: 20 },
  ),
  askPhoto: decide({ thought: 'A photo would show the shape.', action: 'respond', response: ASK_PHOTO, quick_options: [], medical_context_update: { duration: 'weeks', patient_info: { age: 34 } } }),
  lookAtPhoto: decide({
    thought: 'Look at the photo.',
    action: 'use_tool',
    tool: 'analyze_skin_image',
    tool_input: { image_base64: 'attachment:1', context: 'itchy red rash on the arm for weeks' },
  }),
  diagnose: decide({
    thought: 'History and photo fit tinea corporis; no red flags: enough to conclude.',
    action: 'diagnose',
    ready_reason: 'Itchy ring-shaped scaly plaque for weeks, typical on the photo.',
    response: DIAGNOSIS,
    medical_context_update: { suspected_conditions: ['tinea corporis'], image_findings: [PHOTO_FINDING] },
  }),
  askElbow: decide({ thought: 'Ask about the elbow.', action: 'respond', response: ASK_ELBOW, quick_options: [] }),
  askItch: decide({ thought: 'Ask about itch.', action: 'respond', response: 'Does it itch?', quick_options: ['Yes', 'No'], medical_context_update: { symptoms: ['fever', 'blisters', 'mouth sores'] } }),
};

function lastSent(request: RecordedRequest): string {
  const messages: Array<{ role: string; content: unknown }> = request.body?.messages ?? [];
  const last = messages.at(-1)?.content;
  return typeof last === 'string' ? last : JSON.stringify(last ?? '');
}

function decisionFor(request: RecordedRequest): string | undefined {
  const text = lastSent(request);
  if (text.includes('<tool_result>')) return text.includes(PHOTO_FINDING) ? 'diagnose' : 'askDuration';
  if (text.includes(FIRST_MESSAGE)) return 'lookUp';
  if (text.includes(PHOTO_MESSAGE)) return 'lookAtPhoto';
  if (text.includes(URGENT_MESSAGE)) return 'askItch';
  if (text.includes(RETRIED_MESSAGE)) return 'askElbow';
  if (text.includes('Weeks')) return 'askPhoto';
  return undefined;
}

let browser: Browser;
let harness: Harness | undefined;
let vision: ScriptedModel | undefined;

beforeAll(async () => {
  buildConsole();
  vision = await startScriptedModel([], {
    fallback: { reply: JSON.stringify({ findings: [PHOTO_FINDING], conditions: [{ name: 'tinea corporis', likelihood: 'high' }] }) },
  });
  const visionUrl = vision.baseURL;
  [browser, harness] = await Promise.all([
    launchBrowser(),
    startHarness({
      name: 'consult',
      adminToken: ADMIN_TOKEN,
      respond: (request) => {
        const name = decisionFor(request);
        return name ? DECISIONS[name] : undefined;
      },
      fallback: decide({ thought: 'Unscripted.', action: 'respond', response: 'Could you tell me more?', quick_options: [] }),
      env: () => ({ VISION_MODEL: 'scripted-vision', VISION_BASE_URL: visionUrl, CONSULT_IMAGE_MAX_BYTES: String(IMAGE_MAX_BYTES) }),
    }),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
  await vision?.close();
});

const riskBanner = (page: Page) => page.getByLabel('Risk level');
const recordPanel = (page: Page) => page.getByRole('complementary', { name: 'Consult record' });

/** Whether an <img> has loaded real pixels (not a broken image). */
const hasLoaded = (image: ReturnType<Page['locator']>) => image.evaluate((element) => (element as HTMLImageElement).complete && (element as HTMLImageElement).naturalWidth > 0);

async function startConsult(page: Page, title: string): Promise<void> {
  await page.getByLabel('Title (optional)').fill(title);
  await page.getByRole('button', { name: 'New consult' }).click();
  await page.getByTestId('consult-item').filter({ hasText: title }).and(page.locator('[aria-current="page"]')).waitFor({ timeout: UI_TIMEOUT_MS });
  await page.getByTestId('chat-input').waitFor({ timeout: UI_TIMEOUT_MS });
}

describe('the dermatology consult in the console', () => {
  it('runs a consult from the first message through a photo to an assessment, its risk level and its dossier', async () => {
    const context = await browser.newContext({ locale: 'en-US', acceptDownloads: true });
    const page = await context.newPage();
    const { server } = harness!;
    try {
      await withScreenshot(page, 'consult-first-message', async () => {
        await signIn(page, server.url, ADMIN_TOKEN);
        await page.getByTestId('nav-consult').click();
        await startConsult(page, 'Itchy arm');
        // Nothing said yet: no risk level is claimed.
        expect(await page.getByTestId('risk-banner').count()).toBe(0);

        await page.getByTestId('chat-input').fill(FIRST_MESSAGE);
        await page.getByTestId('chat-send').click();
        // The reply shows while it is written (only its text, never the JSON decision), then the result replaces it.
        const streaming = page.getByTestId('consult-streaming').filter({ hasText: 'Thank you.' });
        await streaming.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await streaming.textContent()).not.toContain('"action"');
        // The knowledge search the reply was written from shows as one compact line.
        expect(await streaming.getByTestId('tools-used').getAttribute('data-tools')).toBe('search_medical_knowledge');
        const held = await waitFor(async () => harness!.model.requests.find((r) => r.stream && r.stream.chunksSent === 20 && !r.stream.isComplete), 'the reply to be held after its first pieces', UI_TIMEOUT_MS, 20);
        held.stream!.resume();
        await page.getByTestId('consult-reply').filter({ hasText: ASK_DURATION }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('consult-streaming').count()).toBe(0);

        await expect.poll(() => riskBanner(page).getAttribute('data-level'), { timeout: UI_TIMEOUT_MS }).toBe('low');
        expect(await riskBanner(page).textContent()).toContain('Risk: Low');
        const symptoms = recordPanel(page).locator('[data-path="symptoms"]');
        expect(await symptoms.textContent()).toContain('itchy red rash');
        expect(await recordPanel(page).locator('[data-path="location"]').textContent()).toContain('arm');
        await snap(page, 'consult-first-reply');
      });

      await withScreenshot(page, 'consult-quick-option', async () => {
        const options = page.getByRole('group', { name: 'Quick answers' });
        expect(await options.getByRole('button').allTextContents()).toEqual(['Days', 'Weeks', 'Months']);
        await options.getByRole('button', { name: 'Weeks' }).click();
        // The option was sent as the patient's message and answered.
        await page.getByTestId('consult-user-message').filter({ hasText: /^You\s*Weeks$/ }).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('consult-reply').filter({ hasText: ASK_PHOTO }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByRole('group', { name: 'Quick answers' }).count()).toBe(0);
        await recordPanel(page).locator('[data-path="duration"]').filter({ hasText: 'weeks' }).waitFor({ timeout: UI_TIMEOUT_MS });
        // The first reply, now one of the consult's recorded turns, still names the search it was written from.
        expect(await page.getByTestId('consult-reply').filter({ hasText: ASK_DURATION }).getByTestId('tools-used').getAttribute('data-tools')).toBe('search_medical_knowledge');
        expect(await recordPanel(page).locator('[data-path="patient_info.age"]').textContent()).toContain('34');
      });

      await withScreenshot(page, 'consult-photo-too-large', async () => {
        // A photo over the server's limit is refused with the server's own words: how large it is, what is accepted.
        await page.getByLabel('Attach a photo').setInputFiles({ name: 'large.png', mimeType: 'image/png', buffer: PNG_TOO_LARGE });
        await page.getByTestId('image-preview').filter({ hasText: 'large.png' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('chat-input').fill('A large photo.');
        await page.getByTestId('chat-send').click();
        const refusal = page.getByTestId('consult-send-error');
        await refusal.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await refusal.textContent()).toMatch(/the largest accepted is 1(\.0)? KB \(CONSULT_IMAGE_MAX_BYTES\)/);
        await snap(page, 'consult-photo-refused');
        // A file that is no image is refused at once, before anything is sent.
        await page.getByLabel('Attach a photo').setInputFiles({ name: 'notes.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4') });
        expect(await page.getByRole('alert').filter({ hasText: '"notes.pdf" is not a JPEG, PNG or WebP image' }).count()).toBe(1);
        expect(await page.getByTestId('image-preview').count()).toBe(0);
      });

      await withScreenshot(page, 'consult-photo', async () => {
        await page.getByLabel('Attach a photo').setInputFiles({ name: 'patch.png', mimeType: 'image/png', buffer: PNG_1PX });
        expect(await page.getByRole('alert').filter({ hasText: 'notes.pdf' }).count()).toBe(0);
        const preview = page.getByTestId('image-preview');
        await preview.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await preview.textContent()).toContain('patch.png');
        await expect.poll(() => hasLoaded(preview.getByRole('img', { name: 'Preview of the photo to send' })), { timeout: UI_TIMEOUT_MS }).toBe(true);
        await snap(page, 'consult-preview');

        await page.getByTestId('chat-input').fill(PHOTO_MESSAGE);
        await page.getByTestId('chat-send').click();
        expect(await page.getByTestId('image-preview').count()).toBe(0);
        await page.getByTestId('consult-reply').filter({ hasText: 'This looks most like tinea corporis' }).waitFor({ timeout: UI_TIMEOUT_MS });

        // The photo now shows in the patient's message, from the consult's attachments route.
        const sent = page.getByTestId('consult-user-message').filter({ hasText: PHOTO_MESSAGE }).getByTestId('consult-attachment');
        await sent.waitFor({ timeout: UI_TIMEOUT_MS });
        await expect.poll(() => hasLoaded(sent), { timeout: UI_TIMEOUT_MS }).toBe(true);
        expect(await sent.getAttribute('src')).toMatch(/^blob:/);

        expect(await riskBanner(page).getAttribute('data-level')).toBe('low');
        expect(await riskBanner(page).getAttribute('role')).toBe('status');
        await recordPanel(page).locator('[data-path="suspected_conditions"]').filter({ hasText: 'tinea corporis' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await recordPanel(page).locator('[data-path="image_findings"]').textContent()).toContain(PHOTO_FINDING);
        expect(await page.getByTestId('consult-item').filter({ hasText: 'Itchy arm' }).textContent()).toContain('assessed');
        await snap(page, 'consult-diagnosis');
      });

      await withScreenshot(page, 'consult-dossier', async () => {
        await recordPanel(page).getByRole('button', { name: 'View dossier' }).click();
        const dossier = page.getByRole('article', { name: 'Dossier contents' });
        await dossier.waitFor({ timeout: UI_TIMEOUT_MS });
        // Shown as a readable record, not as JSON.
        const assessment = dossier.locator('[data-section="assessment"]');
        expect(await assessment.getByRole('heading').textContent()).toBe('Assessment');
        expect(await assessment.textContent()).toContain('tinea corporis');
        expect(await dossier.locator('[data-section="transcript"]').textContent()).toContain(FIRST_MESSAGE);
        expect(await dossier.textContent()).not.toContain('{"');
        await recordPanel(page).getByText(/^Last made /).waitFor({ timeout: UI_TIMEOUT_MS });
        await snap(page, 'consult-dossier');

        const [download] = await Promise.all([page.waitForEvent('download', { timeout: UI_TIMEOUT_MS }), recordPanel(page).getByRole('button', { name: 'Download DOCX' }).click()]);
        expect(download.suggestedFilename()).toMatch(/\.docx$/);
        const file = await readFile((await download.path())!);
        expect(file.subarray(0, 2).toString('latin1')).toBe('PK');
      });

      await withScreenshot(page, 'consult-urgent', async () => {
        await startConsult(page, 'Blisters');
        await page.getByTestId('chat-input').fill(URGENT_MESSAGE);
        await page.getByTestId('chat-send').click();
        // The model only asked about itch; the safety check put the advice to seek care above it, in the patient's
        // language (they wrote Chinese).
        const reply = page.getByTestId('consult-reply').filter({ hasText: 'Does it itch?' });
        await reply.waitFor({ timeout: UI_TIMEOUT_MS });
        const text = (await reply.textContent()) ?? '';
        expect(text.indexOf('请立即就医')).toBeGreaterThanOrEqual(0);
        expect(text.indexOf('请立即就医')).toBeLessThan(text.indexOf('Does it itch?'));

        const banner = riskBanner(page);
        await expect.poll(() => banner.getAttribute('data-level'), { timeout: UI_TIMEOUT_MS }).toBe('urgent');
        expect(await banner.getAttribute('role')).toBe('alert');
        expect(await banner.textContent()).toContain('Risk: Urgent');
        expect(await banner.textContent()).toContain('请立即就医');
        expect(await banner.getByRole('list', { name: 'Warning signs found' }).getByRole('listitem').count()).toBeGreaterThan(0);
        expect(await banner.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(180, 35, 24)');
        await snap(page, 'consult-urgent');
      });

      await withScreenshot(page, 'consult-continue', async () => {
        // Continuing the first consult loads its turns, its photo and its risk level from the server.
        await page.getByTestId('consult-item').filter({ hasText: 'Itchy arm' }).click();
        await page.getByTestId('consult-reply').filter({ hasText: 'This looks most like tinea corporis' }).waitFor({ timeout: UI_TIMEOUT_MS });
        const photo = page.getByTestId('consult-attachment');
        await photo.waitFor({ timeout: UI_TIMEOUT_MS });
        await expect.poll(() => hasLoaded(photo), { timeout: UI_TIMEOUT_MS }).toBe(true);
        // Read once the photo has loaded: until then its message also says "Loading photo…".
        await expect.poll(() => page.getByTestId('consult-user-message').allTextContents(), { timeout: UI_TIMEOUT_MS }).toEqual([`You${FIRST_MESSAGE}`, 'YouWeeks', `You${PHOTO_MESSAGE}`]);
        expect(await riskBanner(page).getAttribute('data-level')).toBe('low');
      });

      // One model call per decision, each answered from the script (none fell back), and one look at the photo.
      const calls = harness!.model.requests.filter((request) => request.path.endsWith('/chat/completions'));
      expect(calls.map(decisionFor)).toEqual(['lookUp', 'askDuration', 'askPhoto', 'lookAtPhoto', 'diagnose', 'askItch']);
      const looks = vision!.requests.filter((request) => request.path.endsWith('/chat/completions'));
      expect(looks).toHaveLength(1);
      expect(looks[0]!.body.model).toBe('scripted-vision');
      expect(JSON.stringify(looks[0]!.body.messages)).toContain(`data:image/png;base64,${PNG_1PX.toString('base64')}`);
    } finally {
      await context.close();
    }
  });

  it('retries a send whose answer was lost on the way back under the same message id: the consult holds and answers it once', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    const { server } = harness!;
    try {
      await withScreenshot(page, 'consult-retry', async () => {
        await signIn(page, server.url, ADMIN_TOKEN);
        await page.getByTestId('nav-consult').click();
        await startConsult(page, 'Elbow');
        // The first send reaches the server, which stores and answers it; the answer is lost on the way back (the
        // page reads the 503 a restarting database gives), so the page cannot know the message was taken.
        const sent: Array<{ message: string; clientMessageId?: string }> = [];
        await page.route('**/api/consult/sessions/*/messages/stream', async (route) => {
          sent.push(route.request().postDataJSON());
          if (sent.length > 1) return route.continue();
          await route.fetch();
          return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ code: 'DATABASE_UNAVAILABLE', message: 'The database is restarting or unreachable, so this request may not have completed.', details: {} }) });
        });
        const calls = harness!.model.requests.length;
        await page.getByTestId('chat-input').fill(RETRIED_MESSAGE);
        await page.getByTestId('chat-send').click();
        const failed = page.getByTestId('consult-send-error');
        await failed.waitFor({ timeout: UI_TIMEOUT_MS });
        await snap(page, 'consult-send-failed');
        await failed.getByTestId('consult-retry').click();
        await page.getByTestId('consult-reply').filter({ hasText: ASK_ELBOW }).waitFor({ timeout: UI_TIMEOUT_MS });

        expect(sent.map((body) => body.message)).toEqual([RETRIED_MESSAGE, RETRIED_MESSAGE]);
        expect(sent[0]!.clientMessageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(sent[1]!.clientMessageId).toBe(sent[0]!.clientMessageId);
        // The model answered the message once; the retry got that answer.
        expect(harness!.model.requests.slice(calls).map(decisionFor)).toEqual(['askElbow']);
        await expect.poll(() => page.getByTestId('consult-user-message').allTextContents(), { timeout: UI_TIMEOUT_MS }).toEqual([`You${RETRIED_MESSAGE}`]);
        expect(await page.getByTestId('consult-send-error').count()).toBe(0);

        // The next message is another message: a new id.
        await page.getByTestId('chat-input').fill('It is not itchy.');
        await page.getByTestId('chat-send').click();
        await page.getByTestId('consult-user-message').filter({ hasText: 'It is not itchy.' }).waitFor({ timeout: UI_TIMEOUT_MS });
        await expect.poll(() => sent.length, { timeout: UI_TIMEOUT_MS }).toBe(3);
        expect(sent[2]!.clientMessageId).toMatch(/^[0-9a-f-]{36}$/);
        expect(sent[2]!.clientMessageId).not.toBe(sent[0]!.clientMessageId);
      });
    } finally {
      await context.close();
    }
  });
});
