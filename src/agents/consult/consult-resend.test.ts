import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsultReply } from '../../contract/index.js';
import type { Database } from '../../core/db/connect.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { consultClient } from '../../testing/consult-client.js';
import { multipartBody } from '../../testing/multipart.js';
import { postEventStream, readEventStream } from '../../testing/read-event-stream.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { startServerOn, type ServerOnDatabase } from '../../testing/server-on-database.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';

const decide = (decision: Record<string, unknown>) => ({ reply: JSON.stringify(decision) });
const ask = (response: string) => decide({ thought: 'Ask more.', action: 'respond', response, quick_options: ['Days', 'Weeks'] });
/** A 1x1 PNG: real bytes, so the upload check reads its signature. */
const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/**
 * The last crash finding of issue 35: a consult message whose request failed after the server may have stored it (a
 * 503 while PostgreSQL restarts, a dropped connection, a killed process) is sent again by its client with the same
 * clientMessageId, and the consult holds it once and answers it once. The knowledge base is not used: both engines.
 */
describe.each(testEngines())('a consult message resent with its clientMessageId on %s', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let tokens: { patient: string; other: string; viewer: string };
  let patientId: string;

  const { call, start, session } = consultClient(() => ({ url: server.url, token: tokens.patient }), { title: 'Resend' });
  const send = (sessionId: string, body: Record<string, unknown>, token?: string) => call('POST', `/api/consult/sessions/${sessionId}/messages`, body, token);
  const streamUrl = (sessionId: string) => `${server.url}/api/consult/sessions/${sessionId}/messages/stream`;
  const userTurns = async (sessionId: string) => (await session(sessionId)).turns.filter((t) => t.role === 'user');

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL, env: { LLM_MAX_RETRIES: '0' } });
    const patient = await server.ctx.users.create({ name: 'resend-patient', role: 'coordinator' });
    patientId = patient.user.id;
    tokens = {
      patient: patient.token,
      other: (await server.ctx.users.create({ name: 'resend-other', role: 'pi' })).token,
      viewer: (await server.ctx.users.create({ name: 'resend-viewer', role: 'viewer' })).token,
    };
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it('answers a resend after a complete reply with that reply, storing nothing and calling the model no more', async () => {
    const sessionId = await start();
    const clientMessageId = randomUUID();
    model.push(ask('How long have you had it?'));
    const calls = model.requests.length;
    const first = await send(sessionId, { message: 'I have an itchy rash on my arm.', clientMessageId });
    expect(first.status).toBe(200);
    const again = await send(sessionId, { message: 'I have an itchy rash on my arm.', clientMessageId });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(model.requests.length - calls).toBe(1);
    const saved = await session(sessionId);
    expect(saved.turns.map((t) => [t.role, t.content])).toEqual([['user', 'I have an itchy rash on my arm.'], ['assistant', (first.body as ConsultReply).response]]);
    expect(saved.turns[0]!.clientMessageId).toBe(clientMessageId);

    // The consult goes on; the first message resent later still gets its own reply, not the latest one.
    model.push(ask('Does it itch at night?'));
    expect((await send(sessionId, { message: 'Two weeks.', clientMessageId: randomUUID() })).status).toBe(200);
    const late = await send(sessionId, { message: 'I have an itchy rash on my arm.', clientMessageId });
    expect(late.body).toEqual(first.body);
    expect(model.requests.length - calls).toBe(2);
    expect((await session(sessionId)).turns).toHaveLength(4);
  });

  it('answers a resend on the stream route with the stored reply as its last event', async () => {
    const sessionId = await start();
    const body = { message: 'A red patch on my cheek.', clientMessageId: randomUUID() };
    model.push(ask('Since when?'));
    const calls = model.requests.length;
    const first = await postEventStream(streamUrl(sessionId), tokens.patient, body);
    expect(first.at(-1)).toMatchObject({ event: 'result', data: { response: 'Since when?' } });
    const again = await postEventStream(streamUrl(sessionId), tokens.patient, body);
    expect(again.at(-1)!.event).toBe('result');
    expect(again.at(-1)!.data).toEqual(first.at(-1)!.data);
    expect(model.requests.length - calls).toBe(1);
    expect((await userTurns(sessionId)).map((t) => t.content)).toEqual(['A red patch on my cheek.']);
  });

  it('takes the message once when its stream dropped mid-answer, and the resend makes the reply', async () => {
    const sessionId = await start();
    const body = { message: 'Blisters on my foot.', clientMessageId: randomUUID() };
    const calls = model.requests.length;
    await dropStreamMidAnswer(sessionId, body);

    model.push(ask('How many blisters?'));
    const again = await send(sessionId, body);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    // The risk advice for blisters leads what the model wrote.
    expect((again.body as ConsultReply).response).toMatch(/How many blisters\?$/);
    expect(model.requests.length - calls).toBe(2);
    const saved = await session(sessionId);
    expect(saved.turns.map((t) => [t.role, t.content])).toEqual([['user', 'Blisters on my foot.'], ['assistant', (again.body as ConsultReply).response]]);
    // And a third send is that reply again.
    expect((await send(sessionId, body)).body).toEqual(again.body);
    expect(model.requests.length - calls).toBe(2);
  });

  it('keeps the image of a message whose stream dropped once, when the resend takes the message again', async () => {
    const sessionId = await start();
    const body = { message: 'This spot on my back.', image: { data: PNG_1PX.toString('base64') }, clientMessageId: randomUUID() };
    await dropStreamMidAnswer(sessionId, body);
    const listed = (await session(sessionId)).attachments;
    expect(listed).toHaveLength(1);

    model.push(ask('How big is the spot?'));
    const again = await send(sessionId, body);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const saved = await session(sessionId);
    expect(saved.attachments).toEqual(listed);
    expect(saved.turns.filter((t) => t.role === 'user').map((t) => [t.content, t.attachmentId])).toEqual([['This spot on my back.', listed[0]!.id]]);
  });

  it('answers the message a dead process took but never answered, once, when the client resends it', async () => {
    const sessionId = await start();
    const body = { message: 'My mole changed colour.', clientMessageId: randomUUID() };
    const runId = await runIdOf(sessionId);
    // What a process killed after taking the message leaves: the message stored with its run, RUNNING, no live lease.
    await server.ctx.consult.runs.store.decide(database.db, runId, { kind: 'answer', input: { text: body.message, clientMessageId: body.clientMessageId }, actor: patientId });
    model.push(ask('When did you notice the change?'));
    const calls = model.requests.length;
    const again = await send(sessionId, body);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((again.body as ConsultReply).response).toMatch(/When did you notice the change\?$/);
    expect(model.requests.length - calls).toBe(1);
    expect((await userTurns(sessionId)).map((t) => t.content)).toEqual(['My mole changed colour.']);
    expect((await send(sessionId, body)).body).toEqual(again.body);
    expect(model.requests.length - calls).toBe(1);
  });

  it('stores one message when the same message is sent twice at once, and both get its reply', async () => {
    const sessionId = await start();
    const body = { message: 'My scalp is flaking.', clientMessageId: randomUUID() };
    model.push(ask('Is it itchy?'));
    const calls = model.requests.length;
    const held = model.gate();
    const first = send(sessionId, body);
    await held.reached;
    // The resend arrives while the first is being answered (its stream is open, the model holds the first's
    // reply): it waits for that answer rather than being refused as "still being answered".
    const second = await fetch(streamUrl(sessionId), { method: 'POST', headers: { authorization: `Bearer ${tokens.patient}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(second.status).toBe(200);
    held.release();
    const a = await first;
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    const streamed: Array<{ event: string; data: unknown }> = [];
    for await (const event of readEventStream(second)) streamed.push(event);
    expect(streamed.at(-1)).toEqual(expect.objectContaining({ event: 'result', data: a.body }));
    expect(model.requests.length - calls).toBe(1);
    expect((await userTurns(sessionId)).map((t) => t.content)).toEqual(['My scalp is flaking.']);

    // Both at once before either is taken, a multipart form this time: still one message.
    const twin = { message: 'It is itchy at night.', clientMessageId: randomUUID() };
    model.push(ask('Any dandruff?'));
    const form = multipartBody({ fields: twin });
    const post = () => fetch(`${server.url}/api/consult/sessions/${sessionId}/messages`, { method: 'POST', headers: { authorization: `Bearer ${tokens.patient}`, ...form.headers }, body: form.payload });
    const both = await Promise.all([post(), post()]);
    const bodies = await Promise.all(both.map((r) => r.json()));
    expect(both.map((r) => r.status), JSON.stringify(bodies)).toEqual([200, 200]);
    expect(bodies[1]).toEqual(bodies[0]);
    expect(model.requests.length - calls).toBe(2);
    expect((await userTurns(sessionId)).map((t) => t.content)).toEqual(['My scalp is flaking.', 'It is itchy at night.']);
  });

  it('refuses an id sent again with another text or image, naming the conflict, and stores nothing', async () => {
    const sessionId = await start();
    const clientMessageId = randomUUID();
    model.push(ask('Where exactly?'));
    const first = await send(sessionId, { message: 'A rash on my leg.', clientMessageId });
    expect(first.status).toBe(200);
    const calls = model.requests.length;
    for (const other of [{ message: 'A rash on my arm.' }, { message: 'A rash on my leg.', image: { data: PNG_1PX.toString('base64') } }]) {
      const refused = await send(sessionId, { ...other, clientMessageId });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'CONFLICT_STATE', details: { field: 'clientMessageId', reason: 'client_message_id_reused' } });
      expect(refused.body.message).toMatch(/already sent with another message.*new id/);
    }
    expect(model.requests.length).toBe(calls);
    const saved = await session(sessionId);
    expect(saved.turns).toHaveLength(2);
    expect(saved.attachments).toEqual([]);
  });

  it('is its owner\'s whatever the id, refuses a viewer, and says what a malformed id should be', async () => {
    const sessionId = await start();
    const clientMessageId = randomUUID();
    model.push(ask('How long?'));
    expect((await send(sessionId, { message: 'Spots on my back.', clientMessageId })).status).toBe(200);
    const calls = model.requests.length;
    for (const id of [clientMessageId, randomUUID()]) {
      expect((await send(sessionId, { message: 'Spots on my back.', clientMessageId: id }, tokens.other)).status).toBe(404);
      expect((await send(sessionId, { message: 'Spots on my back.', clientMessageId: id }, tokens.viewer)).status).toBe(403);
    }
    const malformed = await send(sessionId, { message: 'Spots on my back.', clientMessageId: 'message-1' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/body\.clientMessageId: must be a UUID .*make a new one for each message/);
    expect(model.requests.length).toBe(calls);
    expect((await session(sessionId)).turns).toHaveLength(2);
  });

  it('takes every message sent without an id, as before: the same text twice is two messages', async () => {
    const sessionId = await start();
    model.push(ask('Which side?'), ask('Which side, left or right?'));
    const calls = model.requests.length;
    expect((await send(sessionId, { message: 'My ear itches.' })).status).toBe(200);
    expect((await send(sessionId, { message: 'My ear itches.' })).status).toBe(200);
    expect(model.requests.length - calls).toBe(2);
    expect((await userTurns(sessionId)).map((t) => t.content)).toEqual(['My ear itches.', 'My ear itches.']);
  });

  /**
   * Sends the message on the stream route and drops the connection while the model is writing: the server stops
   * the turn after the message was taken, and the consult waits for a message again.
   */
  async function dropStreamMidAnswer(sessionId: string, body: Record<string, unknown>): Promise<void> {
    model.push(ask('This answer is never read.'));
    const held = model.gate();
    const connection = new AbortController();
    const response = await fetch(streamUrl(sessionId), { method: 'POST', headers: { authorization: `Bearer ${tokens.patient}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: connection.signal });
    const events = readEventStream(response);
    expect((await events.next()).value).toMatchObject({ event: 'run_started' });
    await held.reached;
    connection.abort();
    await events.return(undefined).catch(() => undefined);
    held.release();
    const runId = await runIdOf(sessionId);
    await waitFor(async () => ((await runOf(runId)).status === 'SUSPENDED' ? true : undefined), 'the dropped turn to end', 20_000, 50);
  }

  async function runIdOf(sessionId: string): Promise<string> {
    const [run] = await database.db.select({ id: agentRuns.id }).from(agentRuns).where(eq(agentRuns.conversationId, sessionId));
    return run!.id;
  }
  async function runOf(runId: string) {
    const [run] = await database.db.select().from(agentRuns).where(eq(agentRuns.id, runId));
    return run!;
  }
});
