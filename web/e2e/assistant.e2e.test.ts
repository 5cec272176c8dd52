import { sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedStep } from '../../src/testing/scripted-model.js';
import { waitFor } from '../../src/testing/wait-for.js';
import { createTrialStore } from '../../src/trial/store/trial-store.js';
import type { TrialField, TrialRecord } from '../../src/trial/store/types.js';
import { buildConsole, launchBrowser, signIn, snap, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The trial assistant in the console, against the real server, database and assistant; only the model's words are
 * scripted, told apart by their prompt: the intent classifier gets JSON intents, every other call the answer.
 * The acceptance item: "An end-to-end browser test edits hot memory and sees the next answer's prompt use
 * it". A coordinator adds a preference in the hot-memory editor, asks a data question, reads the answer with its
 * intent badge, and the prompt the model received for that answer holds the new line; a thumbs-down with a
 * comment is stored. An admin then follows the answer's trace link to the readable trace.
 *
 * Set E2E_SCREENSHOT_DIR to keep a screenshot of each page.
 */

const ADMIN_TOKEN = 'e2e-admin-token-assistant-0123456789ab';
// Not the shipped demo project, which the server may load on first start.
const PROJECT_ID = 'e2e-assistant';
const MEMORY_LINE = '汇报只列结论，不要过程 (report conclusions only)';
const QUESTION = 'How many subjects are enrolled at each site?';
const ANSWER = 'Three subjects: two at SITE-01 and one at SITE-02.';
const ANSWER_ZH = '共 3 名受试者：SITE-01 两名，SITE-02 一名。';
const COMMENT = 'Name the subject IDs next time.';
const WEEK_REPORT = 'The team checked enrolment: three subjects across two sites.';

const field = (fieldName: string, fieldType: TrialField['fieldType'], label: string): TrialField => ({
  fieldName, formName: 'enrolment', fieldType, label, choices: [], validationMin: null, validationMax: null, required: true,
});

const RECORDS: TrialRecord[] = [
  { recordId: 'S1', eventName: 'baseline', site: 'SITE-01', data: { record_id: 'S1', age: 40 } },
  { recordId: 'S2', eventName: 'baseline', site: 'SITE-01', data: { record_id: 'S2', age: 52 } },
  { recordId: 'S3', eventName: 'baseline', site: 'SITE-02', data: { record_id: 'S3', age: 61 } },
];

/** The classifier's prompt opens with this (src/memory/route-intent-prompt.ts). */
const isRouterCall = (request: RecordedRequest) => JSON.stringify(request.body?.messages?.[0]?.content ?? '').includes('You route messages');
const lastUserText = (request: RecordedRequest): string => {
  const messages: Array<{ role: string; content: unknown }> = request.body?.messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : '';
};

/**
 * Every model call: JSON intents for the classifier; otherwise the scripted answer in the question's language,
 * the Chinese question first looking the numbers up with a read-only tool so its trace has an action to show.
 */
function respond(request: RecordedRequest): ScriptedStep {
  if (isRouterCall(request)) return { reply: JSON.stringify({ intents: [{ type: 'data_question', text: 'question' }] }) };
  if (JSON.stringify(request.body?.messages?.[0]?.content ?? '').includes('weekly report')) return { reply: WEEK_REPORT };
  const chinese = /[\u4e00-\u9fff]/.test(lastUserText(request));
  const looked = (request.body?.messages ?? []).some((m: { role: string }) => m.role === 'tool');
  if (chinese && !looked) return { toolCalls: [{ name: 'get_project_stats', arguments: {} }] };
  // The Chinese answer is held after its first pieces until the test lets it go on (stream.resume()), so the test
  // sees the streamed tool call and plan before it ends however slow the machine.
  return { reply: chinese ? ANSWER_ZH : ANSWER, stream: chinese ? { pieceChars: 4, stallAfterChunks: 2 } : { pieceChars: 8 } };
}

let browser: Browser;
let harness: Harness | undefined;
let coordinator: { id: string; token: string };

beforeAll(async () => {
  buildConsole();
  [browser, harness] = await Promise.all([
    launchBrowser(),
    startHarness({ name: 'assistant', adminToken: ADMIN_TOKEN, respond, fallback: { reply: ANSWER } }),
  ]);
  const { ctx } = harness.server;
  const store = createTrialStore(ctx.db);
  await store.ensureProject({ id: PROJECT_ID, name: 'E2E assistant study' }, 'e2e');
  await store.replaceDictionary(PROJECT_ID, [field('record_id', 'text', 'Record ID'), field('age', 'integer', 'Age')], 'e2e');
  await store.replaceEvents(PROJECT_ID, [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'e2e');
  await store.importRecords(PROJECT_ID, RECORDS, { actor: 'e2e', reason: 'Initial REDCap export' });
  const created = await ctx.users.create({ name: 'crc-li', role: 'coordinator' });
  await ctx.users.addMember(PROJECT_ID, created.user.id);
  coordinator = { id: created.user.id, token: created.token };
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

async function api<T>(path: string, token: string): Promise<T> {
  const response = await fetch(`${harness!.server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

/** Asks the assistant and waits for the final answer holding `expected`. */
async function ask(page: Page, question: string, expected: string) {
  await page.getByTestId('chat-input').fill(question);
  await page.getByTestId('chat-send').click();
  const answer = page.getByTestId('assistant-answer').filter({ hasText: expected });
  await answer.waitFor({ timeout: UI_TIMEOUT_MS });
  return answer;
}

describe('the trial assistant in the console', () => {
  it('edits hot memory, and the next answer is asked with it; a thumbs-down with a comment is stored', async () => {
    const { model } = harness!;
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'assistant-memory', async () => {
        await signIn(page, harness!.server.url, coordinator.token);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/memory`);

        // A memory never written: version 0, nothing in it yet.
        const version = page.getByTestId('memory-version');
        await version.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await version.getAttribute('data-version')).toBe('0');
        expect(await page.getByTestId('memory-tokens').textContent()).toMatch(/\d+ \/ \d+ tokens/);

        // Edit: the preference goes under ## Preferences, saved against version 0.
        await page.getByTestId('memory-edit').click();
        const editor = page.getByTestId('memory-editor');
        expect(await editor.inputValue()).toContain('## Preferences');
        await editor.fill(`## Preferences\n- ${MEMORY_LINE}\n\n## Current state\n- Enrolment is open at both sites\n`);
        const put = page.waitForRequest((r) => r.method() === 'PUT' && new URL(r.url()).pathname === `/api/iit/projects/${PROJECT_ID}/memory`);
        await page.getByTestId('memory-save').click();
        expect((await put).postDataJSON()).toMatchObject({ baseVersion: 0 });
        await page.getByTestId('memory-saved').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('memory-saved').textContent()).toContain('Saved as version 1');
        expect(await version.textContent()).toBe('Version 1');

        // The list view shows each line with its section and where it came from.
        const line = page.getByTestId('memory-line').filter({ hasText: MEMORY_LINE });
        expect(await line.getAttribute('data-section')).toBe('preferences');
        expect(await line.getByTestId('memory-line-source').textContent()).toBe('Written by crc-li');
        await page.getByTestId('memory-version-row').first().waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('memory-version-row').first().textContent()).toContain('Editor');
        await snap(page, 'en-memory');

        // Someone else saves while this editor is open: saving answers 409, and Reload opens the newer version.
        await page.getByTestId('memory-edit').click();
        const elsewhere = await fetch(`${harness!.server.url}/api/iit/projects/${PROJECT_ID}/memory`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content: `## Preferences\n- ${MEMORY_LINE}\n\n## Prohibitions\n- Never name patients`, baseVersion: 1 }),
        });
        expect(elsewhere.status).toBe(200);
        await editor.fill(`${await editor.inputValue()}\n- A line that will not be saved`);
        await page.getByTestId('memory-save').click();
        await page.getByTestId('memory-conflict').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('memory-conflict').textContent()).toContain('changed since you opened it');
        await page.getByTestId('memory-reload').click();
        await page.waitForFunction(() => (document.querySelector('[data-testid="memory-editor"]') as HTMLTextAreaElement | null)?.value.includes('Never name patients'), undefined, { timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('memory-unsaved').textContent()).toContain('A line that will not be saved');
        await page.getByTestId('memory-cancel').click();
        expect(await version.textContent()).toBe('Version 2');

        // Restore version 1 from the history, after confirming: it comes back as version 3.
        await page.locator('[data-testid="memory-version-row"][data-version="1"]').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.locator('[data-testid="memory-version-row"][data-version="1"]').getByTestId('memory-version-restore').click();
        await page.getByTestId('memory-restore-yes').click();
        await page.getByTestId('memory-saved').filter({ hasText: 'Version 1 restored as version 3' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await version.textContent()).toBe('Version 3');
        expect(await page.getByTestId('memory-line').filter({ hasText: 'Never name patients' }).count()).toBe(0);
        await page.locator('[data-testid="memory-version-row"][data-version="3"]').waitFor({ timeout: UI_TIMEOUT_MS });

        // Ask a data question; the answer streams in with its intent badge.
        await page.getByTestId('trial-tab-assistant').click();
        const calls = model.requests.length;
        const request = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === `/api/iit/projects/${PROJECT_ID}/chat/stream`);
        const answer = await ask(page, QUESTION, ANSWER);
        expect((await request).postDataJSON()).toEqual({ message: QUESTION });
        expect(await answer.getByTestId('intent-badge').textContent()).toBe('Data question');
        expect(await answer.getByTestId('assistant-answer-text').textContent()).toBe(ANSWER);
        // A coordinator has no trace link: traces are for admins.
        expect(await answer.getByTestId('assistant-trace-link').count()).toBe(0);

        // The model answered with the edited memory in its prompt; the classifier never sees the memory.
        const sent = model.requests.slice(calls);
        const router = sent.filter(isRouterCall);
        const answering = sent.filter((r) => !isRouterCall(r));
        expect(router.length).toBeGreaterThanOrEqual(1);
        expect(answering.length).toBeGreaterThanOrEqual(1);
        expect(JSON.stringify(router.map((r) => r.body.messages))).not.toContain(MEMORY_LINE);
        const prompt = JSON.stringify(answering[0]!.body.messages);
        expect(prompt).toContain(MEMORY_LINE);
        expect(prompt).toContain(QUESTION);

        // Thumbs down with a comment: stored for the next distillation.
        await answer.getByTestId('feedback-down').click();
        await answer.getByTestId('feedback-comment').fill(COMMENT);
        await answer.getByTestId('feedback-send').click();
        await answer.getByTestId('feedback-saved').waitFor({ timeout: UI_TIMEOUT_MS });
        const conversationId = await answer.getAttribute('data-conversation-id');
        const turnSeq = Number(await answer.getAttribute('data-turn-seq'));
        const { feedback } = await api<{ feedback: Array<{ conversationId: string; turnSeq: number; rating: string; comment: string; userId: string }> }>(
          `/api/iit/projects/${PROJECT_ID}/feedback`,
          coordinator.token,
        );
        expect(feedback).toEqual([expect.objectContaining({ conversationId, turnSeq, rating: 'down', comment: COMMENT, userId: coordinator.id })]);
        await snap(page, 'en-assistant');

        // The conversation is listed, and reopening it shows the question and the answer, not the tool turns.
        await page.getByTestId('new-conversation').click();
        const item = page.getByTestId('conversation-item').filter({ hasText: QUESTION });
        await item.waitFor({ timeout: UI_TIMEOUT_MS });
        await item.click();
        const earlier = page.getByTestId('earlier-turns');
        await earlier.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await earlier.getByTestId('earlier-user-message').textContent()).toContain(QUESTION);
        expect(await earlier.getByTestId('earlier-agent-message').last().textContent()).toContain(ANSWER);
        expect(await earlier.getByTestId('earlier-tool-result').count()).toBe(0);
        await snap(page, 'en-assistant-reopened');

        // A follow-up continues that conversation.
        const followUp = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === `/api/iit/projects/${PROJECT_ID}/chat/stream`);
        await page.getByTestId('chat-input').fill('And at SITE-02?');
        await page.getByTestId('chat-send').click();
        expect((await followUp).postDataJSON()).toEqual({ message: 'And at SITE-02?', conversationId });
        await page.getByTestId('assistant-answer').filter({ hasText: ANSWER }).last().waitFor({ timeout: UI_TIMEOUT_MS });

        // A week's report is written once the week has ended: move this conversation to last week, the week the
        // reports page offers first, and write its report.
        await harness!.server.ctx.db.execute(sql`UPDATE conversation_turns SET created_at = created_at - interval '7 days' WHERE conversation_id = ${conversationId}`);
        await page.getByTestId('trial-tab-reports').click();
        await page.getByTestId('reports-page').getByText('No reports yet').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('report-generate').click();
        const report = page.locator('[data-testid="report-row"][data-kind="week"]');
        await report.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await report.getByTestId('report-summary').textContent()).toBe(WEEK_REPORT);
        expect(await report.getByTestId('report-regenerate').isEnabled()).toBe(true);
        await snap(page, 'en-reports');
      });
    } finally {
      await context.close();
    }
  });

  it('shows an admin the trace of an answer step by step, in Chinese', async () => {
    const context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'assistant-trace', async () => {
        await signIn(page, harness!.server.url, ADMIN_TOKEN);
        await page.goto(`${harness!.server.url}/#/trial/${PROJECT_ID}/assistant`);
        await page.getByTestId('chat-input').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('chat-input').fill('各中心入组了多少受试者？');
        await page.getByTestId('chat-send').click();
        // While the answer is written: the plan's intent as a badge, and the finished tool call of part 0 by name.
        const streaming = page.getByTestId('assistant-streaming');
        await streaming.locator('[data-testid="assistant-tool"][data-status="ok"]').filter({ hasText: 'get_project_stats' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await streaming.getByTestId('intent-badge').getAttribute('data-intent')).toBe('data_question');
        const held = await waitFor(async () => harness!.model.requests.find((r) => r.stream && r.stream.chunksSent === 2 && !r.stream.isComplete), 'the answer to be held after its first pieces', UI_TIMEOUT_MS, 20);
        held.stream!.resume();
        const answer = page.getByTestId('assistant-answer').filter({ hasText: ANSWER_ZH });
        await answer.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await answer.getByTestId('intent-badge').textContent()).toBe('数据问题');

        await answer.getByTestId('assistant-trace-link').click();
        await page.waitForURL(/#\/traces\//);
        const panel = page.getByTestId('trace-panel');
        await panel.waitFor({ timeout: UI_TIMEOUT_MS });
        // The classifier's round, the round that looked the numbers up (action and observation), the answer's round.
        expect(await panel.getByTestId('trace-step').count()).toBeGreaterThanOrEqual(3);
        expect(await panel.getByTestId('trace-action').first().textContent()).toContain('get_project_stats');
        expect(await panel.getByTestId('trace-observation').first().textContent()).toContain('subjects');
        expect(await panel.getByTestId('trace-thought').last().textContent()).toContain(ANSWER_ZH);
        expect(await panel.textContent()).toContain('思考');
        await snap(page, 'zh-trace');

        // The profile on the account page: Chinese, brief answers.
        await page.getByTestId('nav-tokens').click();
        await page.getByTestId('profile-form').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.getByTestId('profile-detail').selectOption('brief');
        await page.getByTestId('profile-language').selectOption('zh');
        await page.getByTestId('profile-role-title').fill('PI');
        await page.getByTestId('profile-save').click();
        await page.getByTestId('profile-saved').waitFor({ timeout: UI_TIMEOUT_MS });
        await snap(page, 'zh-account');
        expect(await api<{ detailLevel: string; language: string; roleTitle: string }>('/api/profile', ADMIN_TOKEN)).toMatchObject({ detailLevel: 'brief', language: 'zh', roleTitle: 'PI' });
      });
    } finally {
      await context.close();
    }
  });
});
