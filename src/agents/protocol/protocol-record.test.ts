import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolChatResponse, ProtocolContextResponse } from '../../contract/index.js';
import { buildServer } from '../../http/server.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';

/**
 * Issue 31: what the Protocol Agent records and says stays right whatever the model does. Every model output here
 * goes through the scripted model over HTTP and the real gateway, loop and parser; the checks read the HTTP answers.
 */
describe.each(testEngines())("the researcher's record on %s", (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let tokens: { pi: string; other: string };

  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, token = tokens.pi) => {
    const response = await app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload });
    return { status: response.statusCode, body: String(response.headers['content-type'] ?? '').includes('json') ? response.json() : response.body };
  };
  const chat = async (conversationId: string, message: string) => call('POST', '/api/aia/protocol-agent/chat', { conversationId, message });
  const contextOf = async (conversationId: string) => (await call('GET', `/api/aia/protocol-agent/context/${conversationId}`)).body as ProtocolContextResponse;
  const start = async (title: string) => (await call('POST', '/api/aia/protocol-agent/conversations', { title })).body.conversationId as string;

  /** A protocol at its sample size stage, the earlier stages filled in the state panel (no model needed). */
  async function atSampleSize(title: string): Promise<string> {
    const id = await start(title);
    const fill = async (field: string, value: object) => expect((await call('PATCH', `/api/aia/protocol-agent/context/${id}`, { field, value })).status).toBe(200);
    const complete = async () => expect((await call('POST', '/api/aia/protocol-agent/stage/complete', { conversationId: id })).body).toMatchObject({ success: true });
    await fill('scientificQuestion', { question: 'Does a low-salt diet lower systolic blood pressure in adults with hypertension compared with usual diet?' });
    await complete();
    await fill('pico', { population: 'adults with hypertension', intervention: 'low-salt diet', comparison: 'usual diet', outcome: 'systolic blood pressure at 12 weeks' });
    await complete();
    await fill('studyDesign', { type: 'parallel-group randomised controlled trial', allocation: '1:1' });
    await complete();
    return id;
  }

  beforeAll(async () => {
    model = await startScriptedModel([]);
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL });
    app = await buildServer(ctx, { serveConsole: false });
    tokens = { pi: (await ctx.users.create({ name: 'pi-record', role: 'pi' })).token, other: (await ctx.users.create({ name: 'pi-elsewhere', role: 'pi' })).token };
  });
  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  it("answers a turn stopped after failed tool calls for this turn, never with the previous turn's reply", async () => {
    const id = await atSampleSize('Stopped turn');
    model.push({ reply: 'What difference in systolic pressure do you expect, and its standard deviation?' });
    expect((await chat(id, 'Let us size the trial.')).status).toBe(200);

    // Two calls the tool refuses (no sd): the error breaker stops the turn before the model writes anything.
    const bad = { design: 'two_means', meanDiff: 5, alpha: 0.05, power: 0.8, sides: 2 };
    model.push({ toolCalls: [{ name: 'calculate_sample_size', arguments: bad }] }, { toolCalls: [{ name: 'calculate_sample_size', arguments: bad }] });
    const stopped = await chat(id, 'A difference of 5 mmHg.');
    expect(stopped.status).toBe(200);
    const body = stopped.body as ProtocolChatResponse;
    expect(body.message).not.toContain('What difference in systolic pressure');
    expect(body.message).toMatch(/^No answer was written for this message/);
    expect(body.contextUpdate).toBeNull();
    expect((await contextOf(id)).sampleSize).toEqual({});
  });

  it('keeps the calculator result of a tool loop that ran until tools were withheld, and says no reply was written', async () => {
    const id = await atSampleSize('Tool loop');
    const inputs = { design: 'two_means', effectSize: 0.5, alpha: 0.05, power: 0.8, sides: 2 };
    // The model calls the calculator every round, and again once tools are withheld: no text in the whole turn.
    model.push(
      { toolCalls: [{ name: 'calculate_sample_size', arguments: inputs }] },
      { toolCalls: [{ name: 'calculate_sample_size', arguments: inputs }] },
      { toolCalls: [{ name: 'calculate_sample_size', arguments: inputs }] },
    );
    const answered = await chat(id, "Effect size 0.5 (Cohen's d), two-sided alpha 0.05, power 80%.");
    expect(answered.status).toBe(200);
    const body = answered.body as ProtocolChatResponse;
    expect(body.message).toMatch(/^No answer was written for this message/);
    expect(body.message).toContain('calculate_sample_size');
    expect(body.contextUpdate).toMatchObject({ field: 'sampleSize', data: { total: 128, perGroup: [64, 64] } });
    expect((await contextOf(id)).sampleSize).toMatchObject({ total: 128, perGroup: [64, 64], alpha: 0.05, power: 0.8, inputs: { design: 'two_means', effectSize: 0.5 } });
  });

  it('marks a sample size the model states without the calculator as not calculated, in the reply and in issues, and records none of it', async () => {
    const id = await atSampleSize('Stated size');
    model.push({ reply: 'About 60 per group, 120 in total, should be enough.\n<extracted_data>{"total": 120, "perGroup": [60, 60], "method": "two-sample t-test"}</extracted_data>' });
    // The user even names the numbers: said is not calculated.
    const stated = (await chat(id, 'Would 60 per group, 120 in total, be enough for a two-sample t-test?')).body as ProtocolChatResponse;
    expect(stated.message).toContain('About 60 per group, 120 in total');
    expect(stated.message).toMatch(/Not calculated/);
    expect(stated.issues).toEqual([expect.stringMatching(/^Not calculated: .*calculate_sample_size/)]);
    expect(stated.contextUpdate).toBeNull();

    // Said in words only, with no data block.
    model.push({ reply: 'You will need about 60 per group, 120 in total.' });
    const words = (await chat(id, 'How many do we need?')).body as ProtocolChatResponse;
    expect(words.issues).toEqual([expect.stringMatching(/^Not calculated: .*60 per group/)]);
    expect(words.message).toMatch(/Not calculated/);
    expect((await contextOf(id)).sampleSize).toEqual({});

    // What the calculator computed this turn, restated, is no claim of the model's.
    model.push(
      { toolCalls: [{ name: 'calculate_sample_size', arguments: { design: 'two_means', meanDiff: 5, sd: 10, alpha: 0.05, power: 0.8, sides: 2 } }] },
      { reply: 'The calculator gives 64 per group, 128 in total.' },
    );
    const computed = (await chat(id, 'Difference 5 mmHg, SD 10, alpha 0.05 two-sided, power 80%.')).body as ProtocolChatResponse;
    expect(computed.issues).toEqual([]);
    expect(computed.message).toBe('The calculator gives 64 per group, 128 in total.');
    expect((await contextOf(id)).sampleSize).toMatchObject({ total: 128, perGroup: [64, 64] });

    // Restating, in a later turn, what the calculator computed earlier is no claim either.
    model.push({ reply: 'As calculated, 128 in total.\n<extracted_data>{"total": 128, "perGroup": [64, 64]}</extracted_data>' });
    const restated = (await chat(id, 'So 128 in total?')).body as ProtocolChatResponse;
    expect(restated.issues).toEqual([]);
    expect(restated.message).toBe('As calculated, 128 in total.');
  });

  it('never lets a broken data block overwrite a recorded value, and says what was not recorded', async () => {
    const id = await start('Broken block');
    const question = 'Does salt restriction lower systolic blood pressure in adults with hypertension compared with usual diet?';
    model.push({ reply: `Noted.\n<extracted_data>{"question": ${JSON.stringify(question)}}</extracted_data>` });
    expect(((await chat(id, question)).body as ProtocolChatResponse).contextUpdate).toMatchObject({ data: { question } });

    // Cut off inside the value: repair would close it as "does salt".
    model.push({ reply: 'Recorded your question.\n<extracted_data>\n{"question": "does salt' });
    const cut = (await chat(id, 'does salt matter more in older adults?')).body as ProtocolChatResponse;
    expect(cut.contextUpdate).toBeNull();
    expect(cut.issues).toEqual([expect.stringMatching(/^Not recorded: .*question/)]);
    expect(cut.message).toMatch(/Not recorded/);
    expect((await contextOf(id)).scientificQuestion).toEqual({ question });

    // Repaired (single quotes, a trailing comma): still no overwrite, while a new key may be added.
    model.push({ reply: "Recorded.\n<extracted_data>{'question': 'does salt', 'background': 'Salt intake raises blood pressure',}</extracted_data>" });
    const repaired = (await chat(id, 'does salt matter? Background: salt intake raises blood pressure')).body as ProtocolChatResponse;
    expect(repaired.issues).toEqual([expect.stringMatching(/^Not recorded: question/)]);
    expect((await contextOf(id)).scientificQuestion).toEqual({ question, background: 'Salt intake raises blood pressure' });
  });

  it('recomputes an action card result from its inputs, refusing one the inputs contradict or of the wrong type or size', async () => {
    const id = await atSampleSize('Callback');
    const inputs = { design: 'two_means', meanDiff: 5, sd: 10, alpha: 0.05, power: 0.8, sides: 2 };
    const callback = (result: Record<string, unknown>) => call('POST', '/api/aia/protocol-agent/action-callback', { conversationId: id, cardId: 'sample_size_calculator', result });
    const computed = { total: 128, perGroup: [64, 64], method: 'two means (noncentral t)', inputs };

    const wrongGroups = await callback({ ...computed, perGroup: [10, 10] });
    expect(wrongGroups.status).toBe(400);
    expect(wrongGroups.body.message).toContain('result.perGroup');
    expect(wrongGroups.body.message).toContain('[64,64]');
    const nestedTotal = await callback({ total: { value: 128, note: 'x' }, inputs });
    expect(nestedTotal.status).toBe(400);
    expect(nestedTotal.body.message).toContain('result.total');
    const hugeMethod = await callback({ total: 128, method: 'x'.repeat(900_000), inputs });
    expect(hugeMethod.status).toBe(400);
    expect(hugeMethod.body.message).toContain('result.method');
    // An edit in the state panel is held to the same size limit.
    const hugeEdit = await call('PATCH', `/api/aia/protocol-agent/context/${id}`, { field: 'sampleSize', value: { method: 'x'.repeat(900_000) } });
    expect(hugeEdit.status).toBe(400);
    expect(hugeEdit.body.message).toContain('method is 900002 characters long as JSON, over the limit of 20000');
    const noInputs = await callback({ total: 128, perGroup: [64, 64] });
    expect(noInputs.status).toBe(400);
    expect(noInputs.body.message).toContain('result.inputs');
    const badInputs = await callback({ total: 128, inputs: { ...inputs, sd: -1 } });
    expect(badInputs.status).toBe(400);
    expect(badInputs.body.message).toContain('sd');
    expect((await contextOf(id)).sampleSize).toEqual({});

    // The calculator's own answer (only the inputs are needed) is recorded as the tool computes it.
    const accepted = await callback({ total: 128, inputs });
    expect(accepted.status).toBe(200);
    expect(accepted.body.context.sampleSize).toMatchObject({ total: 128, perGroup: [64, 64], alpha: 0.05, power: 0.8 });
    expect(accepted.body.context.sampleSize.method).toContain('two means');

    // The stage's summary reads as the protocol does: arms and results, not the calculator's input names.
    const completed = await call('POST', '/api/aia/protocol-agent/stage/complete', { conversationId: id });
    expect(completed.body).toMatchObject({ success: true, previousStage: 'sample_size' });
    expect(completed.body.summary).toContain('total: 128');
    expect(completed.body.summary).toContain('per group: 64, 64');
    expect(completed.body.summary).not.toMatch(/inputs|meanDiff/);
  });

  it('starts a conversation under an id the client chose, for that user only', async () => {
    const chosen = randomUUID();
    const opened = await call('GET', `/api/aia/protocol-agent/context/${chosen}`);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ conversationId: chosen, currentStage: 'scientific_question' });
    model.push({ reply: 'What is your question?' });
    const fresh = randomUUID();
    const first = await chat(fresh, 'I want to study salt.');
    expect(first.status).toBe(200);
    expect((await call('GET', '/api/aia/protocol-agent/conversations')).body.protocols.map((p: { conversationId: string }) => p.conversationId)).toEqual(expect.arrayContaining([chosen, fresh]));

    // Another user's id stays theirs: 404, as for any id one may not see, and nothing is started.
    expect((await call('GET', `/api/aia/protocol-agent/context/${chosen}`, undefined, tokens.other)).status).toBe(404);
    expect((await call('POST', '/api/aia/protocol-agent/chat', { conversationId: fresh, message: 'hello' }, tokens.other)).status).toBe(404);
    expect((await call('GET', '/api/aia/protocol-agent/conversations', undefined, tokens.other)).body.protocols).toEqual([]);
  });

  it('answers a message the model could not (down, busy) with a plain sentence, records nothing, and takes the next', async () => {
    const id = await start('Model down');
    model.push({ status: 500 }, { status: 500 }, { status: 500 });
    const down = await chat(id, 'Does salt restriction lower blood pressure in adults with hypertension?');
    expect(down.status).toBe(200);
    const body = down.body as ProtocolChatResponse;
    expect(body.message).toMatch(/not answered/);
    expect(body.message).not.toMatch(/https?:\/\//);
    expect(body.contextUpdate).toBeNull();
    expect((await contextOf(id)).scientificQuestion).toEqual({});

    model.push({ reply: 'A clear question.\n<extracted_data>{"question": "Does salt restriction lower blood pressure in adults with hypertension?"}</extracted_data>' });
    const next = await chat(id, 'Does salt restriction lower blood pressure in adults with hypertension?');
    expect(next.status).toBe(200);
    expect((next.body as ProtocolChatResponse).message).toBe('A clear question.');
  });

  it('keeps a runaway reply to a readable length, saying it was cut', async () => {
    const id = await start('Runaway reply');
    model.push({ reply: 'The record looks complete. '.repeat(8000) });
    const body = (await chat(id, 'Is the record complete?')).body as ProtocolChatResponse;
    expect(body.message.length).toBeLessThan(12_000);
    expect(body.message).toMatch(/^The record looks complete\./);
    expect(body.message).toMatch(/cut here/);
  });

  it('passes chat attachments to the model as a declared data block', async () => {
    const id = await start('Attachments');
    model.push({ reply: 'I see your synopsis.' });
    const answered = await call('POST', '/api/aia/protocol-agent/chat', { conversationId: id, message: 'My synopsis is attached.', attachments: ['synopsis-v2.docx'] });
    expect(answered.status).toBe(200);
    const user = model.requests.at(-1)!.body.messages.at(-1).content as string;
    expect(user).toContain('<attachments>');
    expect(user).toContain('synopsis-v2.docx');
  });
});
