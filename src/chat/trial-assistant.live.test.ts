import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../core/auth/users.js';
import { buildTestContext } from '../testing/test-context.js';
import { ensureDemoProtocol } from '../trial/demo/load-demo-protocol.js';
import { ensureDemoTrial } from '../trial/demo/load-demo-trial.js';
import { createTrialStore } from '../trial/store/trial-store.js';
import { createTrialAssistant, type TrialAssistant } from './index.js';

/**
 * `npm run test:live`: the trial assistant's scenarios against a real OpenAI-compatible endpoint, on the demo
 * trial. Assertions are about behaviour a real model must show (routes the intents, reads the record through a
 * tool, answers in order, never changes data), not exact words.
 */
describe('live: the trial assistant on the demo trial', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let assistant: TrialAssistant;
  let pi: User;

  beforeAll(async () => {
    if (!process.env.LLM_BASE_URL || !process.env.LLM_MODEL) {
      throw new Error('The live suite needs LLM_BASE_URL and LLM_MODEL (and LLM_API_KEY if the endpoint needs one).');
    }
    ctx = await buildTestContext({
      engine: 'pglite',
      env: { LLM_BASE_URL: process.env.LLM_BASE_URL, LLM_MODEL: process.env.LLM_MODEL, LLM_API_KEY: process.env.LLM_API_KEY, LLM_TIMEOUT_MS: process.env.LLM_TIMEOUT_MS ?? '120000' },
    });
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    await ensureDemoProtocol(ctx.rag);
    pi = (await ctx.users.create({ name: 'live-pi', role: 'pi' })).user;
    await ctx.users.addMember('demo-htn-01', pi.id);
    assistant = createTrialAssistant(ctx);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('answers a data question from the record, through the read-only tools', async () => {
    const answer = await assistant.chat(pi, 'demo-htn-01', { message: 'S001 基线（V1）的收缩压是多少？' });
    expect(answer.intents.map((i) => i.type)).toContain('data_question');
    expect(answer.parts[0]).toMatchObject({ ok: true, ending: 'answer' });
    expect(answer.answer).toMatch(/150/);
  });

  it('answers a question and guides a change request, in that order, without changing data', async () => {
    const answer = await assistant.chat(pi, 'demo-htn-01', { message: 'What is the age of S001? Then change it to 45.' });
    expect(answer.parts.map((p) => p.intent.type)).toEqual(['data_question', 'write_request']);
    expect(answer.answer).toMatch(/57/);
    const record = await ctx.trial.records.record(pi, 'demo-htn-01', 'S001');
    expect(record.events[0]!.data.age).toBe(57);
  });

  it('answers a protocol question from the project\'s protocol', async () => {
    const answer = await assistant.chat(pi, 'demo-htn-01', { message: 'According to the protocol, what is the V2 visit window?' });
    expect(answer.parts[0]).toMatchObject({ ok: true });
    expect(answer.answer).toMatch(/28/);
  });
});
