import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolChatResponse, ProtocolContextResponse, StageCompleteResponse } from '../../contract/index.js';
import type { Database } from '../../core/db/connect.js';
import { buildServer } from '../../http/server.js';
import { readEventStream, type ReceivedEvent } from '../../testing/read-event-stream.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { startServerOn, type ServerOnDatabase } from '../../testing/server-on-database.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';

/** A reply of the stage conversation: some text, and the data block the model hands back. */
const reply = (text: string, data?: Record<string, unknown>) => (data ? `${text}\n<extracted_data>\n${JSON.stringify(data)}\n</extracted_data>` : text);

/**
 * Acceptance of issue 23: one protocol walked through all five stages against the scripted model, with a blocked
 * completion fixed by the user, an edit in the state panel, a server restart between stages (continued with
 * another token: another device), a value the model invented that is not recorded, a calculator result written
 * back through the card's callback, the streamed answer, the exports, and another user who sees nothing of it.
 */
describe.each(testEngines())('the Protocol Agent, walked through all five stages on %s', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let tokens: { owner: string; ownerOtherDevice?: string; other: string; viewer: string };
  let ownerId: string;
  let conversationId: string;

  const startServer = () => startServerOn(database, { engine, llmBaseUrl: model.baseURL });
  const stopServer = () => server.stop();

  const call = async (method: string, path: string, body?: unknown, token = tokens.owner) => {
    const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const type = response.headers.get('content-type') ?? '';
    return { status: response.status, body: (type.includes('json') ? await response.json() : type.includes('text') ? await response.text() : Buffer.from(await response.arrayBuffer())) as any, headers: response.headers };
  };
  const chat = async (message: string, token?: string) => call('POST', '/api/aia/protocol-agent/chat', { conversationId, message }, token);
  const complete = async () => call('POST', '/api/aia/protocol-agent/stage/complete', { conversationId });
  const contextNow = async () => (await call('GET', `/api/aia/protocol-agent/context/${conversationId}`)).body as ProtocolContextResponse;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServer();
    const owner = await server.ctx.users.create({ name: 'pi-owner', role: 'pi' });
    const other = await server.ctx.users.create({ name: 'pi-other', role: 'pi' });
    const viewer = await server.ctx.users.create({ name: 'viewer', role: 'viewer' });
    ownerId = owner.user.id;
    tokens = { owner: owner.token, other: other.token, viewer: viewer.token };
  });

  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it('starts at the scientific question and records the question the user states', async () => {
    const started = await call('POST', '/api/aia/protocol-agent/conversations', { title: 'SGLT2 in CKD' });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ currentStage: 'scientific_question', stageProgress: { current: 1, total: 5, completedStages: [] } });
    conversationId = started.body.conversationId;

    const question = 'Does dapagliflozin slow the decline of kidney function in adults with chronic kidney disease compared with placebo?';
    model.push({ reply: reply('A clear, answerable question. What is known so far (background)?', { question }) });
    const answered = await chat(`My question: ${question}`);
    expect(answered.status).toBe(200);
    const body = answered.body as ProtocolChatResponse;
    expect(body.message).toBe('A clear, answerable question. What is known so far (background)?');
    expect(body.contextUpdate).toMatchObject({ field: 'scientificQuestion', data: { question } });
    expect(body).toMatchObject({ currentStage: 'scientific_question', stageStatus: 'in_progress', issues: [] });
    // The stage's prompt carries the collected context as declared data and asks for the data block.
    const system = model.requests.at(-1)!.body.messages[0].content as string;
    expect(system).toContain('# Current stage: Scientific question');
    expect(system).toContain('<protocol_context>');
    expect(system).toContain('<extracted_data>');

    const done = await complete();
    expect(done.body).toMatchObject({ success: true, previousStage: 'scientific_question', nextStage: 'pico' });
  });

  it('refuses to complete PICO while the comparison is missing, naming it, and completes once the state panel adds it', async () => {
    const eligibility = { inclusion: [{ text: 'Age 18 to 75 years', field: 'age', operator: 'between', value: [18, 75] }] };
    model.push({ reply: reply('Who receives what, and compared with what?', { population: 'adults with chronic kidney disease stage 3', intervention: 'dapagliflozin 10 mg daily', outcome: 'eGFR slope over 24 months', eligibility }) });
    const answered = await chat('Population: adults with chronic kidney disease stage 3. Intervention: dapagliflozin 10 mg daily. Outcome: eGFR slope over 24 months. Inclusion: age 18 to 75 years.');
    expect((answered.body as ProtocolChatResponse).contextUpdate?.data).toEqual({ population: 'adults with chronic kidney disease stage 3', intervention: 'dapagliflozin 10 mg daily', outcome: 'eGFR slope over 24 months', eligibility });

    const refused = await complete();
    expect(refused.status).toBe(200);
    expect(refused.body as StageCompleteResponse).toMatchObject({ success: false, previousStage: 'pico' });
    expect((refused.body as StageCompleteResponse).issues).toEqual(['The comparison (C) is missing: what does the control group receive (placebo, usual care, another treatment)?']);
    expect((await contextNow()).currentStage).toBe('pico');

    const unknownKey = await call('PATCH', `/api/aia/protocol-agent/context/${conversationId}`, { field: 'pico', value: { comparator: 'placebo' } });
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.message).toContain('"comparator" is not a key of pico; its keys are population, intervention, comparison, outcome, eligibility');
    const unknownField = await call('PATCH', `/api/aia/protocol-agent/context/${conversationId}`, { field: 'budget', value: { total: 1 } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.message).toContain('"budget" is not a context field');

    const edited = await call('PATCH', `/api/aia/protocol-agent/context/${conversationId}`, { field: 'pico', value: { comparison: 'matching placebo' } });
    expect(edited.status).toBe(200);
    expect((edited.body as ProtocolContextResponse).pico).toMatchObject({ population: 'adults with chronic kidney disease stage 3', comparison: 'matching placebo' });

    const done = await complete();
    expect(done.body).toMatchObject({ success: true, previousStage: 'pico', nextStage: 'study_design' });
  });

  it('survives a restart between stages and continues from another device', async () => {
    await stopServer();
    server = await startServer();
    tokens.ownerOtherDevice = (await server.ctx.users.issueToken(ownerId, { label: 'laptop' })).token;

    const resumed = (await call('GET', `/api/aia/protocol-agent/context/${conversationId}`, undefined, tokens.ownerOtherDevice)).body as ProtocolContextResponse;
    expect(resumed).toMatchObject({ currentStage: 'study_design', completedStages: ['scientific_question', 'pico'], overallProgress: 40 });
    expect(resumed.pico).toMatchObject({ comparison: 'matching placebo' });

    model.push({ reply: reply('A parallel-group double-blind RCT. Shall we size it?', { type: 'parallel-group randomised controlled trial', blinding: 'double-blind', allocation: '1:1' }) });
    const answered = await chat('It will be a parallel-group randomised controlled trial, double-blind, 1:1 allocation.', tokens.ownerOtherDevice);
    expect(answered.status).toBe(200);
    const done = await complete();
    expect(done.body).toMatchObject({ success: true, nextStage: 'sample_size' });
    // Entering sample_size offers the calculator, pre-filled from the context, in the stage-complete response.
    const card = (done.body as StageCompleteResponse).nextStageActionCards?.find((c) => c.cardId === 'sample_size_calculator');
    expect(card).toMatchObject({ actionType: 'deep_link' });
    expect(card!.actionUrl).toMatch(new RegExp(`^/protocol/calculator\\?conversationId=${conversationId}&cardId=sample_size_calculator`));
  });

  it('never records a sample size the calculator did not compute, even when the model says it did', async () => {
    model.push({ reply: reply('With these assumptions about 200 patients are needed.', { alpha: 0.05, power: 0.9, total: 200, method: 'two-sample t-test' }) });
    const answered = await chat('We expect a mean difference of 5 mmHg with an SD of 10; two-sided alpha 0.05 and 90% power, using a two-sample t-test.');
    const body = answered.body as ProtocolChatResponse;
    // Only the calculator fills the sample size: the model's block records nothing, and its number is marked.
    expect(body.contextUpdate).toBeNull();
    expect(body.issues).toEqual([expect.stringMatching(/^Not calculated: "200 patients are needed"/)]);
    expect(body.message).toContain('⚠ Not calculated');
    expect((await contextNow()).sampleSize).toEqual({});
    // The chat response carries the calculator card while the stage is current.
    expect(body.actionCards.map((c) => c.cardId)).toEqual(['sample_size_calculator']);
    expect(body.actionCards[0]!.actionUrl).toContain('cardId=sample_size_calculator');

    // The trace shows each step of the pipeline, and what extraction refused and why.
    const trace = await call('GET', `/api/aia/protocol-agent/trace/${body.traceId}`);
    expect(trace.status).toBe(200);
    const spans = trace.body.spans as Array<{ kind: string; name: string; output: any }>;
    const pipeline = ['query_analysis', 'planning', 'execution', 'extraction', 'reflexion', 'response'];
    const steps = spans.filter((s) => s.kind === 'step' && pipeline.includes(s.name));
    // Nothing was recorded, so there was nothing for the on_extract rules to check.
    expect(steps.map((s) => s.name)).toEqual(pipeline.filter((name) => name !== 'reflexion'));
    // Execution is the stage's turn on the one loop: its model call is in the same trace.
    expect(spans.filter((s) => s.kind === 'llm')).toHaveLength(1);
    const extraction = steps.find((s) => s.name === 'extraction')!.output;
    expect(extraction.rejected).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'total', value: 200 }), expect.objectContaining({ path: 'alpha', reason: expect.stringContaining('only calculate_sample_size fills it') })]));
    expect(extraction.rejected.find((r: { path: string }) => r.path === 'total').reason).toMatch(/not found in what the user said/);

    const blocked = await complete();
    expect((blocked.body as StageCompleteResponse).issues).toEqual(['The sample size method is missing: how was the number calculated (use the calculator)?', 'The total sample size is missing: calculate it with the calculator card or give the parameters.']);
  });

  it('records the calculator result through the card callback and its resultMapping', async () => {
    const inputs = { design: 'two_means', meanDiff: 5, sd: 10, alpha: 0.05, power: 0.9, sides: 2 };
    const calculated = await call('POST', '/api/tools/sample-size', inputs);
    expect(calculated.status).toBe(200);
    const callback = await call('POST', '/api/aia/protocol-agent/action-callback', { conversationId, cardId: 'sample_size_calculator', result: { ...calculated.body, inputs } });
    expect(callback.status).toBe(200);
    expect(callback.body.applied).toMatchObject({ 'sampleSize.total': calculated.body.total, 'sampleSize.perGroup': calculated.body.perGroup, 'sampleSize.alpha': 0.05, 'sampleSize.power': 0.9 });
    expect(callback.body.context.sampleSize).toMatchObject({ total: calculated.body.total, method: calculated.body.method, inputs: { design: 'two_means' } });
    const wrongCard = await call('POST', '/api/aia/protocol-agent/action-callback', { conversationId, cardId: 'no_such_card', result: { total: 1 } });
    expect(wrongCard.status).toBe(400);
    expect(wrongCard.body.message).toContain('"no_such_card" is not a card of this agent; its cards are sample_size_calculator');

    const done = await complete();
    expect(done.body).toMatchObject({ success: true, previousStage: 'sample_size', nextStage: 'endpoints' });
  });

  it('streams the endpoints answer without its data block, and the ChatResponse comes last', async () => {
    const text = 'The primary endpoint is the eGFR slope, measured by CKD-EPI, at 24 months.';
    model.push({ reply: reply(text, { primary: { name: 'eGFR slope', measure: 'CKD-EPI creatinine equation', timepoint: '24 months' } }), stream: { pieceChars: 7 } });
    const response = await fetch(`${server.url}/api/aia/protocol-agent/chat/stream`, { method: 'POST', headers: { authorization: `Bearer ${tokens.owner}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ conversationId, message: 'Primary endpoint: eGFR slope measured with the CKD-EPI creatinine equation at 24 months.' }) });
    const events: ReceivedEvent[] = [];
    for await (const event of readEventStream(response)) events.push(event);
    expect(events[0]!.event).toBe('run_started');
    const streamedText = events.filter((e) => e.event === 'text_delta').map((e) => e.data.text).join('');
    expect(streamedText).toBe(text);
    expect(events.at(-1)!.event).toBe('result');
    expect(events.at(-1)!.data).toMatchObject({ message: text, currentStage: 'endpoints', contextUpdate: { field: 'endpoints' } });

    const done = await complete();
    expect(done.body).toMatchObject({ success: true, previousStage: 'endpoints' });
    expect(done.body.nextStage).toBeUndefined();
    const finished = await contextNow();
    expect(finished).toMatchObject({ stageStatus: 'completed', overallProgress: 100, completedStages: ['scientific_question', 'pico', 'study_design', 'sample_size', 'endpoints'] });
    expect(finished.spirit.covered.length).toBeGreaterThan(3);
    expect(finished.spirit.open.length).toBeGreaterThan(0);
    const again = await complete();
    expect(again.status).toBe(409);
  });

  it('exports the draft as Markdown and DOCX, and lists the protocol for its owner only', async () => {
    const md = await call('GET', `/api/aia/protocol-agent/export/${conversationId}?format=md`);
    expect(md.status).toBe(200);
    expect(md.headers.get('content-disposition')).toContain('SGLT2-in-CKD.md');
    expect(md.body).toContain('matching placebo');
    expect(md.body).toContain('eGFR slope');
    const docx = await call('GET', `/api/aia/protocol-agent/export/${conversationId}?format=docx`);
    expect(docx.status).toBe(200);
    expect((docx.body as Buffer).subarray(0, 2).toString()).toBe('PK');

    const mine = await call('GET', '/api/aia/protocol-agent/conversations');
    expect(mine.body.protocols).toEqual([expect.objectContaining({ conversationId, title: 'SGLT2 in CKD', currentStage: 'endpoints' })]);
    expect((await call('GET', '/api/aia/protocol-agent/conversations', undefined, tokens.other)).body.protocols).toEqual([]);
  });

  it('shows another user nothing: 404 on every route, as for a conversation that does not exist', async () => {
    const trace = (await call('GET', `/api/aia/protocol-agent/context/${conversationId}`)).body as ProtocolContextResponse;
    const as = tokens.other;
    const attempts = [
      await call('GET', `/api/aia/protocol-agent/context/${conversationId}`, undefined, as),
      await call('PATCH', `/api/aia/protocol-agent/context/${conversationId}`, { field: 'pico', value: { comparison: 'x' } }, as),
      await call('POST', '/api/aia/protocol-agent/chat', { conversationId, message: 'hello' }, as),
      await call('POST', '/api/aia/protocol-agent/stage/complete', { conversationId }, as),
      await call('POST', '/api/aia/protocol-agent/action-callback', { conversationId, cardId: 'sample_size_calculator', result: { total: 1 } }, as),
      await call('GET', `/api/aia/protocol-agent/export/${conversationId}?format=md`, undefined, as),
      await call('GET', `/api/aia/protocol-agent/checks/${conversationId}`, undefined, as),
    ];
    expect(attempts.map((a) => a.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    // Viewers read only, here as everywhere: they draft no protocol.
    const asViewer = await call('POST', '/api/aia/protocol-agent/conversations', { title: 'Mine' }, tokens.viewer);
    expect(asViewer.status).toBe(403);
    expect((await call('GET', '/api/aia/protocol-agent/conversations', undefined, tokens.viewer)).body.protocols).toEqual([]);
    expect(trace.pico).toMatchObject({ comparison: 'matching placebo' });
  });
});

describe('protocol edit checks from the draft', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let token: string;

  beforeAll(async () => {
    model = await startScriptedModel([]);
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL });
    app = await buildServer(ctx, { serveConsole: false });
    token = (await ctx.users.create({ name: 'dm', role: 'coordinator' })).token;
  });
  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  it('compiles the eligibility criteria and visit windows into a QC skill whose generated test records all behave', async () => {
    const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload });
    const { conversationId } = (await inject('POST', '/api/aia/protocol-agent/conversations', { title: 'Checks' })).json();
    expect((await inject('PATCH', `/api/aia/protocol-agent/context/${conversationId}`, {
      field: 'pico',
      value: { eligibility: { inclusion: [{ text: 'Age 18 to 75 years', field: 'age', operator: 'between', value: [18, 75] }, { text: 'eGFR at least 25', field: 'egfr', operator: '>=', value: 25 }], exclusion: [{ text: 'Pregnancy', field: 'pregnant', operator: '==', value: 'yes' }, { text: 'Unable to consent' }] } },
    })).statusCode).toBe(200);
    expect((await inject('PATCH', `/api/aia/protocol-agent/context/${conversationId}`, {
      field: 'studyDesign',
      value: { visitDateField: 'visit_date', visits: [{ name: 'Baseline', day: 0, event: 'baseline_arm_1' }, { name: 'Week 4', day: 28, windowBefore: 3, windowAfter: 3, event: 'week_4_arm_1' }] },
    })).statusCode).toBe(200);
    const checks = await inject('GET', `/api/aia/protocol-agent/checks/${conversationId}`);
    expect(checks.statusCode).toBe(200);
    const body = checks.json();
    expect(body.rules.map((r: { source: string }) => r.source).sort()).toEqual(['exclusion', 'inclusion', 'inclusion', 'visit_window']);
    expect(body.skipped).toEqual(expect.arrayContaining([expect.objectContaining({ text: 'Unable to consent' })]));
    expect(body.verification.passed).toBe(true);
    expect(body.verification.results.length).toBeGreaterThanOrEqual(8);
    expect(body.yaml).toContain('age');
  });
});
