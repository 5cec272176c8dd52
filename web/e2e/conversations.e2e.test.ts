import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launchBrowser, openScenarioChat, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * The chat keeps a conversation: earlier conversations of the scenario are listed, one can be reopened with its
 * turns, and every question asked in it carries its id, so the agent continues it; "New conversation" starts over.
 */

const ADMIN_TOKEN = 'e2e-admin-token-conversations-0123456789';
const QUESTION = 'Which subjects miss a consent date?';
const EARLIER_ANSWER = 'Two subjects, S004 and S017, have no consent date.';

let browser: Browser;
let harness: Harness | undefined;
const ids = { own: '', other: '' };

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
  harness = await startHarness({ name: 'conversations', adminToken: ADMIN_TOKEN, fallback: { reply: '{"summary": "Follow-up answered."}' } });
  const { ctx } = harness.server;
  const admin = (await ctx.users.findByToken(ADMIN_TOKEN))!;
  const own = await ctx.conversations.start({ actor: admin, scenarioId: 'data-completeness', title: 'Consent dates' });
  await ctx.conversations.append(own.id, [
    { role: 'user', content: QUESTION },
    { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'query_demo_records', arguments: '{"field":"consent_date"}' }] },
    { role: 'tool', content: '{"missing": ["S004", "S017"]}', toolCallId: 'call_1', toolName: 'query_demo_records' },
    { role: 'assistant', content: EARLIER_ANSWER },
  ], admin);
  const { user: other } = await ctx.users.create({ name: 'coordinator-elsewhere', role: 'coordinator' });
  ids.own = own.id;
  ids.other = (await ctx.conversations.start({ actor: other, scenarioId: 'data-completeness', title: 'Not yours' })).id;
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
});

const openDataCompleteness = (page: Page) => openScenarioChat(page, harness!.server.url, ADMIN_TOKEN, 'data-completeness');

/** Sends a question and returns the body of the agent run request the console made for it. */
async function ask(page: Page, question: string): Promise<Record<string, unknown>> {
  const request = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname.startsWith('/api/agent/run'), { timeout: UI_TIMEOUT_MS });
  await page.getByTestId('chat-input').fill(question);
  await page.getByTestId('chat-send').click();
  // The next click on Send or "New conversation" waits until this run has ended: both are disabled while it runs.
  return (await request).postDataJSON() as Record<string, unknown>;
}

describe('chat conversations', () => {
  it('lists earlier conversations, reopens one with its turns and continues it until a new one is started', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'conversations', async () => {
        await openDataCompleteness(page);
        const item = page.getByTestId('conversation-item').filter({ hasText: 'Consent dates' });
        await item.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await item.textContent()).toContain('4 messages');
        // Only the signed-in user's conversations are listed, even for an admin.
        expect(await page.getByTestId('conversation-item').filter({ hasText: 'Not yours' }).count()).toBe(0);

        await item.click();
        const earlier = page.getByTestId('earlier-turns');
        await earlier.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await earlier.getByTestId('earlier-user-message').textContent()).toContain(QUESTION);
        expect(await earlier.getByTestId('earlier-agent-message').last().textContent()).toContain(EARLIER_ANSWER);
        expect(await earlier.getByTestId('earlier-tool-result').textContent()).toContain('Result of query_demo_records');
        expect(await page.getByTestId('conversation-item').filter({ hasText: 'Consent dates' }).getAttribute('aria-current')).toBe('true');

        // Every question in the reopened conversation names it, and the model is shown the earlier turns.
        const calls = harness!.model.requests.length;
        expect(await ask(page, 'And at visit 2?')).toMatchObject({ scenarioId: 'data-completeness', conversationId: ids.own });
        await page.getByTestId('answer').last().waitFor({ timeout: UI_TIMEOUT_MS });
        const sent = JSON.stringify(harness!.model.requests[calls]!.body.messages);
        expect(sent).toContain(QUESTION);
        expect(sent).toContain(EARLIER_ANSWER);
        const continued = await harness!.server.ctx.conversations.get(ids.own, (await harness!.server.ctx.users.findByToken(ADMIN_TOKEN))!);
        expect(continued.turns.map((t) => t.content)).toEqual(expect.arrayContaining(['And at visit 2?']));

        // A new conversation: its earlier turns go, and the next question starts afresh...
        await page.getByTestId('new-conversation').click();
        expect(await page.getByTestId('earlier-turns').count()).toBe(0);
        expect(await ask(page, 'A new question')).not.toHaveProperty('conversationId');
        await page.getByTestId('answer').last().waitFor({ timeout: UI_TIMEOUT_MS });
        // ...and once answered it is listed, and the next question continues it rather than the old one.
        await page.getByTestId('conversation-item').filter({ hasText: 'A new question' }).waitFor({ timeout: UI_TIMEOUT_MS });
        const followUp = await ask(page, 'A follow-up');
        expect(followUp.conversationId).toEqual(expect.any(String));
        expect(followUp.conversationId).not.toBe(ids.own);
      });
    } finally {
      await context.close();
    }
  });

  it('shows the conversation list in Chinese', async () => {
    const context = await browser.newContext({ locale: 'zh-CN' });
    const page = await context.newPage();
    try {
      await withScreenshot(page, 'conversations-zh', async () => {
        await openDataCompleteness(page);
        const list = page.getByTestId('conversation-list');
        await list.getByTestId('conversation-item').first().waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await list.textContent()).toContain('历史对话');
        // The counts themselves belong to the test above (whose last answer may still be arriving): here, their Chinese form.
        expect(await list.textContent()).toMatch(/\d+ 条消息/);
      });
    } finally {
      await context.close();
    }
  });
});
