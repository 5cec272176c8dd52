import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../core/db/connect.js';
import { postEventStream, streamedText } from '../../testing/read-event-stream.js';
import { consultClient } from '../../testing/consult-client.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { startServerOn, type ServerOnDatabase } from '../../testing/server-on-database.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';

const decide = (decision: Record<string, unknown>, usage?: { prompt_tokens: number; completion_tokens: number }) => ({ reply: JSON.stringify(decision), ...(usage ? { usage } : {}) });

/** No retries and a short timeout, so a model that is down fails the turn at once. */
const ENV = { LLM_MAX_RETRIES: '0', LLM_TIMEOUT_MS: '1500' };
const SEVERE_EN = 'I have a high fever and a blistering rash spreading over my whole body, my lips are peeling';
const SEVERE_ZH = '我发高烧，全身起水疱的皮疹还在扩散，嘴唇在脱皮';
/** Operator words a patient must never read. */
const OPERATOR_TEXT = /LLM_|https?:\/\/|status code|timed? ?out after|\b5\d\d\b|Raise /i;

/**
 * Issue 31 for the dermatology consult: whatever the model does (down, slow, broken JSON, a tool it invented, an odd
 * medical context, reassurance against the risk level, a budget run through), the patient's own words are checked
 * for risk every turn, the turn is recorded, and the patient reads a plain sentence in their language. The knowledge
 * base is not used here, so these run on both engines.
 */
describe.each(testEngines())('the consult under a misbehaving model on %s', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let token: string;

  const { call, start, say, session } = consultClient(() => ({ url: server.url, token }), { title: 'Misbehaving model' });

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL, env: ENV });
    token = (await server.ctx.users.create({ name: 'patient', role: 'coordinator' })).token;
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it('records the turn and leads with the emergency advice in Chinese when the model answers 500, counting the tokens it used before', async () => {
    const sessionId = await start();
    model.push(decide({ thought: 'Check urgency.', action: 'use_tool', tool: 'assess_risk', tool_input: { symptoms: ['fever', 'blisters'] } }, { prompt_tokens: 600, completion_tokens: 50 }), { status: 500 });
    const reply = await say(sessionId, SEVERE_ZH);
    expect(reply).toMatchObject({ riskLevel: 'urgent', action: 'stopped' });
    expect(reply.response).toMatch(/^⚠️ 请立即就医/);
    expect(reply.response).toContain('咨询服务暂时没有响应');
    expect(reply.response).not.toMatch(OPERATOR_TEXT);

    const saved = await session(sessionId);
    expect(saved.turns.map((t) => [t.role, t.content])).toEqual([['user', SEVERE_ZH], ['assistant', reply.response]]);
    expect(saved).toMatchObject({ riskLevel: 'urgent', tokensUsed: 650 });
    // The operator detail is in the trace of the message.
    const trace = await call('GET', `/api/traces/${reply.traceId}`);
    expect(trace.body).toMatchObject({ status: 'failed', error: expect.stringMatching(/./) });

    // The consult takes the next message, and the model then reads what the patient said while it was down.
    model.push(decide({ thought: 'Urgent; ask about eyes.', action: 'respond', response: '眼睛有没有红肿？', quick_options: ['有', '没有'] }));
    const next = await say(sessionId, '还有眼睛疼');
    expect(next.response).toMatch(/^⚠️ 请立即就医/);
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).toContain(SEVERE_ZH);
  });

  it('gives the emergency advice on the stream when the model times out, with no error event and no operator text', async () => {
    const sessionId = await start();
    model.push({ stallMs: 4000 });
    const events = await postEventStream(`${server.url}/api/consult/sessions/${sessionId}/messages/stream`, token, { message: SEVERE_EN });
    expect(events.map((e) => e.event)).not.toContain('error');
    const result = events.at(-1)!;
    expect(result).toMatchObject({ event: 'result', data: { riskLevel: 'urgent' } });
    expect(result.data.response).toMatch(/^⚠️ Seek emergency care now/);
    expect(result.data.response).toContain('Please send your message again in a few minutes.');
    expect(result.data.response).not.toMatch(OPERATOR_TEXT);
    expect((await session(sessionId)).turns).toHaveLength(2);
  });

  it("leads a high risk with the advice to see a dermatologist and leaves out the model's reassurance", async () => {
    const sessionId = await start();
    model.push(decide({ thought: 'Probably a benign naevus.', action: 'respond', response: 'This is most likely harmless, no need to worry. Do you have other moles like it?', quick_options: ['Yes', 'No'] }));
    const reply = await say(sessionId, 'A mole on my back grew and darkened, it has an irregular edge and it bleeds.');
    expect(reply.riskLevel).toBe('high');
    expect(reply.response).toMatch(/^⚠️ See a dermatologist within two weeks/);
    expect(reply.response).not.toMatch(/harmless|no need to worry/i);
    expect(reply.response).toMatch(/Do you have other moles like it\?$/);

    model.push(decide({ thought: 'Conclude.', action: 'diagnose', ready_reason: 'enough', response: '这颗痣是良性的，不用担心。建议拍照观察变化。' }));
    const concluded = await say(sessionId, '背上的痣变大变黑，边缘不规则，还会出血');
    expect(concluded).toMatchObject({ action: 'diagnose', riskLevel: 'high' });
    expect(concluded.response).toMatch(/^⚠️ 请在两周内看皮肤科医生/);
    expect(concluded.response).not.toMatch(/良性|不用担心/);
    expect(concluded.response).toContain('建议拍照观察变化。');
  });

  it('streams the advice first and never the reassurance the saved reply leaves out', async () => {
    const sessionId = await start();
    model.push({ ...decide({ thought: 'Benign.', action: 'respond', response: 'This is most likely harmless, no need to worry. Do you have other moles like it?', quick_options: [] }), stream: { pieceChars: 5 } });
    const events = await postEventStream(`${server.url}/api/consult/sessions/${sessionId}/messages/stream`, token, { message: 'A mole on my back grew and darkened, it has an irregular edge and it bleeds.' });
    const streamed = streamedText(events);
    expect(streamed).toMatch(/^⚠️ See a dermatologist within two weeks/);
    expect(streamed).not.toMatch(/harmless|no need to worry/i);
    expect(streamed).toContain('Do you have other moles like it?');
    expect(events.at(-1)!.data.response).toBe(streamed);
  });

  it('reads an odd-shaped medical context update into its shape, answers, and takes the next message at once', async () => {
    const sessionId = await start();
    const before = model.requests.length;
    model.push(decide({ thought: 'Ask.', action: 'respond', response: 'Does it itch?', quick_options: ['Yes', 'No'], medical_context_update: { location: 'left forearm', duration: 3, symptoms: [{ name: 'rash' }], patient_info: { age: '34 years', pregnant: 'no' } } }));
    const first = await say(sessionId, 'I have a rash on my left forearm for 3 days.');
    expect(first.medicalContext).toMatchObject({ location: ['left forearm'], duration: '3', symptoms: ['rash'], patient_info: { age: 34, pregnant: false } });

    model.push(decide({ thought: 'Ask more.', action: 'respond', response: 'Any new soap or cream?', quick_options: [], medical_context_update: { symptoms: 'itch', triggers: { name: 'new soap' } } }));
    const second = await say(sessionId, 'Yes, it itches.');
    expect(second).toMatchObject({ action: 'respond', response: 'Any new soap or cream?', medicalContext: { symptoms: ['itch'], triggers: ['new soap'], location: ['left forearm'] } });
    expect(model.requests.length - before).toBe(2);
  });

  it('tells the patient plainly when the answer is cut off, or the model keeps calling a tool that does not exist, in their language', async () => {
    const sessionId = await start();
    // Asked again after the first, the model cuts its answer off again: the loop stops at the second (run-definition.ts).
    const cutOff = { reply: '{"thought": "Explain.", "action": "respond", "response": "Your rash is' };
    model.push(cutOff, cutOff);
    const cut = await say(sessionId, 'What is this red rash on my hand?');
    expect(cut.response).not.toContain('Your rash is');
    expect(cut.response).toBe('My answer was cut off before it was complete. Please send your message again.');

    const wrongTool = decide({ thought: 'Look it up.', action: 'use_tool', tool: 'lookup_disease', tool_input: { query: 'rash' } });
    model.push(wrongTool, wrongTool, wrongTool);
    const lost = await say(sessionId, '手上的红疹是什么？');
    expect(lost.response).not.toMatch(/own words|describe/i);
    expect(lost.response).toBe('我在查询资料时出了问题，暂时没有答案。请稍后再发送一次您的消息。');
  });

  it('checks the consult budget before every model call, not only before a message', async () => {
    await server.stop();
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL, env: { ...ENV, CONSULT_TOKEN_BUDGET: '3000' } });
    try {
      const sessionId = await start();
      const before = model.requests.length;
      const lookUp = decide({ thought: 'Check.', action: 'use_tool', tool: 'assess_risk', tool_input: { symptoms: ['rash'] } }, { prompt_tokens: 1500, completion_tokens: 440 });
      model.push(lookUp, lookUp, lookUp, decide({ thought: 'Ask.', action: 'respond', response: 'Where?', quick_options: [] }));
      const stopped = await say(sessionId, 'I have a rash.');
      expect(model.requests.length - before).toBe(2);
      expect(stopped).toMatchObject({ action: 'stopped' });
      expect(stopped.response).toContain('budget of 3000 tokens');
      expect(await session(sessionId)).toMatchObject({ tokensUsed: 3880 });
    } finally {
      await server.stop();
      server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL, env: ENV });
    }
  });
});
