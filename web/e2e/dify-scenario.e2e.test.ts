import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedDify, type ScriptedDify } from '../../src/testing/scripted-dify.js';
import { buildConsole, launchBrowser, openScenarioChat, UI_TIMEOUT_MS, withScreenshot } from './browser.js';
import { startHarness, stopHarness, type Harness } from './harness.js';

/**
 * A Dify scenario in the console: its card and chat say where it runs (Dify, the app's mode and host) instead of
 * "No tools, 0 documents, No retrieval", offer no document scope, and the start form sends the app's required
 * variable with the question. An invalid scenario file beside it is listed with its problems, the rest served.
 */

const ADMIN_TOKEN = 'e2e-admin-token-dify-0123456789abcdef';
// The server of this test runs in this process and reads Dify keys from its environment, as a deployed one does.
const KEY_VARIABLE = 'DIFY_E2E_CONSOLE_KEY';

let browser: Browser;
let harness: Harness | undefined;
let dify: ScriptedDify;

beforeAll(async () => {
  buildConsole();
  browser = await launchBrowser();
  dify = await startScriptedDify();
  process.env[KEY_VARIABLE] = 'app-e2e-console-0123456789';
  harness = await startHarness({
    name: 'dify-scenario',
    adminToken: ADMIN_TOKEN,
    fallback: { reply: 'unexpected model call' },
    env: async (dataDir) => {
      const scenarios = path.join(dataDir, 'scenarios');
      await mkdir(scenarios);
      await writeFile(path.join(scenarios, 'visit-workflow.yaml'), `id: visit-workflow\nname: Visit workflow\ndescription: Plans a visit on Dify\nengine:\n  type: dify\n  base_url: ${dify.baseURL}\n  api_key_env: ${KEY_VARIABLE}\n  app_mode: workflow\n  input_variable: question\n  output_key: answer\n  inputs:\n    site: S01\n`);
      // One invalid file: the server starts and serves the other scenario, and the list page names its problems.
      await writeFile(path.join(scenarios, 'broken.yaml'), 'id: broken\nname: Broken\nsystem_prompt: p\ntools: [launch_rocket]\n');
      return { SCENARIOS_DIR: scenarios, DIFY_ALLOWED_HOSTS: '127.0.0.1' };
    },
  });
});

afterAll(async () => {
  await browser?.close();
  await stopHarness(harness);
  await dify?.close();
  delete process.env[KEY_VARIABLE];
});

describe('a Dify scenario in the console', () => {
  it('shows its engine instead of empty settings, and sends the start form with the question', async () => {
    dify.push({ events: [{ event: 'workflow_finished', data: { status: 'succeeded', outputs: { answer: 'Visit 2 for P-007 is on 12 March.' }, total_tokens: 7 } }], requiredInputs: ['site', 'patient'] });
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    const host = new URL(dify.baseURL).host;
    try {
      await withScreenshot(page, 'dify-scenario', async () => {
        await page.goto(harness!.server.url);
        await openScenarioChat(page, harness!.server.url, ADMIN_TOKEN, 'visit-workflow');
        expect(await page.getByTestId('dify-engine').textContent()).toBe(`Dify workflow app on ${host}`);
        expect(await page.getByTestId('document-scope').count()).toBe(0);

        // The scenario's own variable is listed (empty: its value applies); the required one is added by hand.
        expect(await page.getByTestId('start-form-name').first().inputValue()).toBe('site');
        await page.getByTestId('start-form-name').nth(1).fill('patient');
        await page.getByTestId('start-form-value').nth(1).fill('P-007');
        await page.getByTestId('chat-input').fill('When is visit 2?');
        await page.getByTestId('chat-send').click();
        await page.getByTestId('answer').filter({ hasText: 'Visit 2 for P-007 is on 12 March.' }).waitFor({ timeout: UI_TIMEOUT_MS });
        expect(dify.requests.at(-1)!.body.inputs).toEqual({ site: 'S01', patient: 'P-007', question: 'When is visit 2?' });

        await page.getByRole('link', { name: /All scenarios/ }).click();
        const card = page.getByTestId('scenario-card-visit-workflow');
        await card.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await page.getByTestId('scenario-engine-host-visit-workflow').textContent()).toBe(`Dify workflow app on ${host}`);
        const text = (await card.textContent()) ?? '';
        expect(text).not.toContain('No tools');
        expect(text).not.toContain('No retrieval');
        expect(text).not.toMatch(/\d+ documents?/);
        const invalid = (await page.getByTestId('invalid-scenarios').textContent()) ?? '';
        expect(invalid).toContain('1 scenario file could not be loaded');
        expect(invalid).toContain('broken.yaml');
        expect(invalid).toContain('tools.0: "launch_rocket" is not a registered tool');
      });
    } finally {
      await context.close();
    }
  });
});
