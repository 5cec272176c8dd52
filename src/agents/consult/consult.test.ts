import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsultSession } from '../../contract/index.js';
import type { Database } from '../../core/db/connect.js';
import { multipartBody } from '../../testing/multipart.js';
import { postEventStream, streamedText } from '../../testing/read-event-stream.js';
import { consultClient } from '../../testing/consult-client.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { startServerOn, type ServerOnDatabase } from '../../testing/server-on-database.js';
import { openTestDatabase } from '../../testing/test-database.js';

const decide = (decision: Record<string, unknown>) => ({ reply: JSON.stringify(decision) });
/** A 1x1 PNG: real bytes, so the upload check reads its signature. */
const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/**
 * Acceptance of issue 24 against the scripted model: the model decides each step itself; the deterministic safety
 * check, the formulary filter and the upload check stand above it. PGlite only: the knowledge base is a pgvector
 * collection, and the machine's PostgreSQL has no pgvector (vector tests run on PGlite).
 */
describe('the dermatology consult', () => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let tokens: { patient: string; other: string };

  const startServer = (env: Record<string, string> = {}) => startServerOn(database, { llmBaseUrl: model.baseURL, env });
  const stopServer = () => server.stop();
  const withVision = () => ({ VISION_MODEL: 'scripted-vision', VISION_BASE_URL: model.baseURL });

  const { call, start, say } = consultClient(() => ({ url: server.url, token: tokens.patient }), { title: 'Rash' });
  /** What the consult sent the model last: its last message (a tool result, or the patient's words). */
  const lastSent = () => model.requests.at(-1)!.body.messages.at(-1).content as string;

  beforeAll(async () => {
    database = await openTestDatabase({ engine: 'pglite' });
    model = await startScriptedModel([]);
    server = await startServer(withVision());
    tokens = { patient: (await server.ctx.users.create({ name: 'patient-coordinator', role: 'coordinator' })).token, other: (await server.ctx.users.create({ name: 'someone-else', role: 'pi' })).token };
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it('asks two follow-up questions, looks things up, assesses the risk itself and diagnoses when it knows enough', async () => {
    const sessionId = await start();
    model.push(
      decide({ thought: 'An itchy red rash: look up the common causes first.', action: 'use_tool', tool: 'search_medical_knowledge', tool_input: { query: 'itchy red ring-shaped scaly rash', specialty: 'dermatology' }, medical_context_update: { symptoms: ['itchy red rash'], location: ['arm'] } }),
      decide({ thought: 'Need duration and triggers.', action: 'respond', response: 'How long have you had it, and did anything start it?', quick_options: ['Days', 'Weeks', 'Months'], medical_context_update: { missing_info: ['duration', 'triggers'] } }),
    );
    const first = await say(sessionId, 'I have an itchy red rash on my arm.');
    expect(first).toMatchObject({ action: 'respond', response: 'How long have you had it, and did anything start it?', quickOptions: ['Days', 'Weeks', 'Months'], riskLevel: 'low' });
    expect(first.medicalContext).toMatchObject({ symptoms: ['itchy red rash'], location: ['arm'], missing_info: ['duration', 'triggers'] });
    // The knowledge tool answered from the shipped articles, with their sources.
    const knowledge = model.requests.at(-1)!.body.messages.at(-1).content as string;
    expect(knowledge).toContain('<tool_result>');
    expect(knowledge.toLowerCase()).toContain('tinea');

    model.push(decide({ thought: 'Ask about the shape and fever.', action: 'respond', response: 'Is it ring-shaped with a scaly edge? Any fever?', quick_options: ['Ring-shaped', 'No fever'], medical_context_update: { duration: 'two weeks', triggers: ['gardening'] } }));
    const second = await say(sessionId, 'Weeks. It started after gardening.');
    expect(second).toMatchObject({ action: 'respond', quickOptions: ['Ring-shaped', 'No fever'] });

    model.push(
      decide({ thought: 'Check urgency before concluding.', action: 'use_tool', tool: 'assess_risk', tool_input: { symptoms: ['ring-shaped scaly itchy rash'], patient_info: { age: 34 } }, medical_context_update: { symptoms: ['itchy red rash', 'ring-shaped', 'scaly edge'], patient_info: { age: 34 } } }),
      decide({ thought: 'Typical tinea corporis, low risk: enough to conclude.', action: 'diagnose', ready_reason: 'Ring-shaped scaly itchy plaque after soil contact, no red flags.', response: 'This looks most like tinea corporis (ringworm). A topical antifungal usually clears it; see a doctor if it spreads or does not improve in two weeks. I am not a replacement for a doctor.', medical_context_update: { suspected_conditions: ['tinea corporis'] } }),
    );
    const third = await say(sessionId, 'Yes, ring-shaped with a scaly edge, no fever. I am 34.');
    expect(third).toMatchObject({ action: 'diagnose', riskLevel: 'low', redFlags: [] });
    expect(third.response).toMatch(/^This looks most like tinea corporis/);
    expect(model.requests.at(-1)!.body.messages.at(-1).content).toContain('risk_level');
    // Every thought is in the trace of its message.
    const trace = await call('GET', `/api/traces/${third.traceId}`);
    expect(trace.status).toBe(200);
    expect(JSON.stringify(trace.body)).toContain('Typical tinea corporis, low risk: enough to conclude.');

    const session = (await call('GET', `/api/consult/sessions/${sessionId}`)).body as ConsultSession;
    expect(session).toMatchObject({ status: 'diagnosed', riskLevel: 'low' });
    expect(session.medicalContext).toMatchObject({ duration: 'two weeks', suspected_conditions: ['tinea corporis'], patient_info: { age: 34 } });
    expect(session.turns.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);

    const md = await call('GET', `/api/consult/sessions/${sessionId}/dossier?format=md`);
    expect(md.status).toBe(200);
    expect(md.body).toContain('tinea corporis');
    const docx = await call('GET', `/api/consult/sessions/${sessionId}/dossier?format=docx`);
    expect((docx.body as Buffer).subarray(0, 2).toString()).toBe('PK');
  });

  it('puts urgent advice above whatever the model decided when a red flag appears', async () => {
    const sessionId = await start();
    model.push(decide({ thought: 'Ask about itch.', action: 'respond', response: 'Does it itch?', quick_options: ['Yes', 'No'], medical_context_update: { symptoms: ['rash'] } }));
    const reply = await say(sessionId, '我发烧39度，全身起水疱，嘴里也溃烂了');
    expect(reply.riskLevel).toBe('urgent');
    expect(reply.redFlags.map((f) => f.id)).toEqual(expect.arrayContaining(['mucosal_involvement']));
    expect(reply.response.indexOf('Does it itch?')).toBeGreaterThan(0);
    // In the patient's language (they wrote Chinese), whatever language the model answered in.
    expect(reply.response.slice(0, reply.response.indexOf('Does it itch?'))).toMatch(/^⚠️ 请立即就医/);

    // A diagnosis of something harmless does not take the advice away either.
    model.push(decide({ thought: 'Probably eczema.', action: 'diagnose', ready_reason: 'itchy', response: 'This is probably eczema.' }));
    const concluded = await say(sessionId, 'It itches a bit.');
    expect(concluded.action).toBe('diagnose');
    expect(concluded.riskLevel).toBe('urgent');
    expect(concluded.response).not.toMatch(/^This is probably eczema/);
  });

  it('never offers a contraindicated drug: the formulary filter answers the model with the reasons', async () => {
    const sessionId = await start();
    model.push(
      decide({ thought: 'Pregnant patient with acne: check medicines.', action: 'use_tool', tool: 'search_medication', tool_input: { condition: 'acne', contraindications: ['pregnancy'] }, medical_context_update: { patient_info: { pregnant: true } } }),
      decide({ thought: 'Offer what is safe.', action: 'respond', response: 'Azelaic acid cream is an option in pregnancy; avoid isotretinoin.', quick_options: [] }),
    );
    await say(sessionId, 'I am pregnant and have acne, what can I use?');
    const toolResult = model.requests.at(-1)!.body.messages.at(-1).content as string;
    const offered = JSON.parse(toolResult.slice(toolResult.indexOf('{'), toolResult.lastIndexOf('}') + 1)).result;
    expect(offered.medications.map((m: { name: string }) => m.name.toLowerCase()).join(' ')).not.toMatch(/isotretinoin|doxycycline/);
    expect(offered.warnings.join(' ').toLowerCase()).toContain('isotretinoin');
  });

  it('survives a failing tool: the error goes back to the model, which asks in text instead', async () => {
    const sessionId = await start();
    model.push(
      decide({ thought: 'Look up medicines.', action: 'use_tool', tool: 'search_medication', tool_input: { contraindications: 'none' } }),
      decide({ thought: 'The tool failed; ask instead.', action: 'respond', response: 'Which medicines have you already tried?', quick_options: ['None'] }),
    );
    const reply = await say(sessionId, 'What cream should I use for my eczema?');
    expect(reply).toMatchObject({ action: 'respond', response: 'Which medicines have you already tried?' });
    expect(lastSent()).toMatch(/Tool call failed/);
  });

  it('analyses an uploaded image through the vision model, refuses a file that is not an image, and streams only the response text', async () => {
    const sessionId = await start();
    const bad = await call('POST', `/api/consult/sessions/${sessionId}/messages`, { message: 'photo', image: { data: Buffer.from('not an image at all').toString('base64') } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/JPEG|PNG|WebP/);

    model.push(
      decide({ thought: 'Look at the photo.', action: 'use_tool', tool: 'analyze_skin_image', tool_input: { image_base64: 'attachment:1', context: 'red patch on the arm' } }),
      { reply: JSON.stringify({ findings: ['annular erythematous plaque with a scaly border'], conditions: [{ name: 'tinea corporis', likelihood: 'high' }] }) },
      { ...decide({ thought: 'The image fits tinea.', action: 'respond', response: 'The photo shows a ring-shaped patch with a scaly border. Does it itch?', quick_options: ['Yes', 'No'], medical_context_update: { image_findings: ['annular scaly plaque'] } }), stream: { pieceChars: 9 } },
    );
    const events = await postEventStream(`${server.url}/api/consult/sessions/${sessionId}/messages/stream`, tokens.patient, { message: 'Here is a photo of the patch.', image: { data: `data:image/png;base64,${PNG_1PX.toString('base64')}` } });
    const vision = model.requests.at(-2)!.body;
    expect(vision.model).toBe('scripted-vision');
    expect(JSON.stringify(vision.messages)).toContain(`data:image/png;base64,${PNG_1PX.toString('base64')}`);
    const streamed = streamedText(events);
    expect(streamed).toBe('The photo shows a ring-shaped patch with a scaly border. Does it itch?');
    expect(events.map((e) => e.event)).toContain('tool_call_finished');
    expect(events.at(-1)).toMatchObject({ event: 'result', data: { action: 'respond', medicalContext: { image_findings: ['annular scaly plaque'] } } });
    const session = (await call('GET', `/api/consult/sessions/${sessionId}`)).body as ConsultSession;
    expect(session.attachments).toEqual([expect.objectContaining({ mimeType: 'image/png', sizeBytes: PNG_1PX.length })]);
    expect(session.turns[0]).toMatchObject({ role: 'user', attachmentId: session.attachments[0]!.id });
    const preview = await call('GET', `/api/consult/sessions/${sessionId}/attachments/${session.attachments[0]!.id}`);
    expect(preview.headers.get('content-type')).toBe('image/png');
  });

  it('resumes after a restart, and without a vision model an image turn goes on in text', async () => {
    const sessionId = await start();
    model.push(decide({ thought: 'Ask where.', action: 'respond', response: 'Where is the rash?', quick_options: ['Arm', 'Leg'], medical_context_update: { symptoms: ['rash'] } }));
    await say(sessionId, 'I have a rash.');

    await stopServer();
    server = await startServer();
    const resumed = (await call('GET', `/api/consult/sessions/${sessionId}`)).body as ConsultSession;
    expect(resumed).toMatchObject({ status: 'open', quickOptions: ['Arm', 'Leg'], medicalContext: { symptoms: ['rash'] } });

    model.push(
      decide({ thought: 'Look at the photo.', action: 'use_tool', tool: 'analyze_skin_image', tool_input: { image_base64: 'attachment:1', context: 'rash on the leg' } }),
      decide({ thought: 'No image analysis here; ask instead.', action: 'respond', response: 'I cannot look at photos here. Please describe the colour and shape.', quick_options: [] }),
    );
    const reply = await say(sessionId, 'On my leg, here is a photo.', { data: PNG_1PX.toString('base64') });
    expect(reply.response).toBe('I cannot look at photos here. Please describe the colour and shape.');
    expect(lastSent()).toContain('VISION_MODEL');
    // The model saw the whole consult again: the earlier question is in its history.
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).toContain('Where is the rash?');
  });

  it('takes an image as a multipart file too, refusing one over the size limit with what to do', async () => {
    const sessionId = await start();
    model.push(decide({ thought: 'Ask about it.', action: 'respond', response: 'When did it appear?', quick_options: [] }));
    const form = multipartBody({ fields: { message: 'A photo of my hand.' }, files: { image: { name: 'hand.png', content: PNG_1PX, type: 'image/png' } } });
    const sent = await fetch(`${server.url}/api/consult/sessions/${sessionId}/messages`, { method: 'POST', headers: { authorization: `Bearer ${tokens.patient}`, ...form.headers }, body: form.payload });
    expect(sent.status).toBe(200);
    expect(((await call('GET', `/api/consult/sessions/${sessionId}`)).body as ConsultSession).attachments).toEqual([expect.objectContaining({ mimeType: 'image/png' })]);
    const huge = Buffer.concat([PNG_1PX, Buffer.alloc(6 * 1024 * 1024)]);
    const tooBig = await call('POST', `/api/consult/sessions/${sessionId}/messages`, { message: 'bigger photo', image: { data: huge.toString('base64') } });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.message).toMatch(/CONSULT_IMAGE_MAX_BYTES|smaller|at most/i);
  });

  it('stops at its token budget with a clear message, without calling the model again', async () => {
    await stopServer();
    server = await startServer({ CONSULT_TOKEN_BUDGET: '1000' });
    const sessionId = await start();
    model.push({ ...decide({ thought: 'Ask.', action: 'respond', response: 'Where is it?', quick_options: [] }), usage: { prompt_tokens: 900, completion_tokens: 200 } });
    await say(sessionId, 'I have a rash.');
    const calls = model.requests.length;
    const stopped = await say(sessionId, 'On my arm.');
    expect(stopped.action).toBe('stopped');
    expect(stopped.response).toContain('budget of 1000 tokens');
    expect(model.requests.length).toBe(calls);
    expect(((await call('GET', `/api/consult/sessions/${sessionId}`)).body as ConsultSession)).toMatchObject({ tokensUsed: 1100, tokenBudget: 1000 });
  });

  it('is its owner\'s: anyone else gets 404 on every route', async () => {
    const sessionId = await start();
    const as = tokens.other;
    const statuses = [
      (await call('GET', `/api/consult/sessions/${sessionId}`, undefined, as)).status,
      (await call('POST', `/api/consult/sessions/${sessionId}/messages`, { message: 'hi' }, as)).status,
      (await call('GET', `/api/consult/sessions/${sessionId}/dossier?format=json`, undefined, as)).status,
    ];
    expect(statuses).toEqual([404, 404, 404]);
    expect((await call('GET', '/api/consult/sessions', undefined, as)).body.sessions).toEqual([]);
  });
});
