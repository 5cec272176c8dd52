import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../testing/test-context.js';
import { buildServer } from './server.js';

type App = Awaited<ReturnType<typeof buildServer>>;

const MB = 1024 * 1024;
const BOUNDARY = '----clinagent-upload-test';

interface Answer {
  status: number;
  body: { code: string; message: string; details: Record<string, unknown> };
  /** Bytes of the body the client had written when the answer came. */
  sentWhenAnswered: number;
}

/**
 * Sends one multipart file of `fileBytes` bytes in 1 MB chunks, letting the loop turn after each (so the server
 * reads while the client writes), and calls `between` after each chunk. Stops writing as soon as the server
 * answers (an early 413).
 */
async function slowUpload(
  port: number,
  options: { auth: string; field: string; fileBytes: number; chunked?: boolean; between?: (chunk: number) => Promise<void> },
): Promise<Answer> {
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${options.field}"; filename="records.csv"\r\nContent-Type: text/csv\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const chunk = Buffer.alloc(MB, 'S001,v1_arm_1,45\n');
  const length = head.length + options.fileBytes + tail.length;
  let sent = 0;
  let answered = false;
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/iit/projects/trial-u/imports',
      headers: {
        authorization: options.auth,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...(options.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) }),
      },
    });
    req.on('response', (res: IncomingMessage) => {
      answered = true;
      const sentWhenAnswered = sent;
      let text = '';
      res.on('data', (data: Buffer) => (text += data.toString('utf8')));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), sentWhenAnswered });
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    void (async () => {
      const write = (data: Buffer) => new Promise<void>((done) => (req.write(data) ? done() : req.once('drain', done)));
      await write(head);
      let remaining = options.fileBytes;
      for (let i = 0; remaining > 0 && !answered; i++) {
        const piece = remaining >= chunk.length ? chunk : chunk.subarray(0, remaining);
        await write(piece);
        sent += piece.length;
        remaining -= piece.length;
        await options.between?.(i);
        await nextTurn();
      }
      if (!answered) req.end(tail);
    })().catch((error) => {
      if (!answered) reject(error);
    });
  });
}

describe('multipart upload limits', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: App;
  let small: App;
  let port: number;
  let auth: string;

  beforeAll(async () => {
    ctx = await buildTestContext();
    app = await buildServer(ctx, { serveConsole: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
    // The same context with small limits, as UPLOAD_MAX_BYTES=1024 and UPLOAD_MAX_TOTAL_BYTES=1536 set them.
    small = await buildServer({ ...ctx, config: { ...ctx.config, uploads: { maxFileBytes: 1024, maxTotalBytes: 1536 } } }, { serveConsole: false });
    await ctx.users.createProject({ id: 'trial-u', name: 'Uploads' });
    const { user, token } = await ctx.users.create({ name: 'dm-uploads', role: 'coordinator' });
    await ctx.users.addMember('trial-u', user.id);
    auth = `Bearer ${token}`;
  });

  afterAll(async () => {
    await small?.close();
    await app?.close();
    await ctx?.close();
  });

  it('defaults to 50 MB per file, configurable with UPLOAD_MAX_BYTES', () => {
    expect(ctx.config.uploads).toEqual({ maxFileBytes: 50 * MB, maxTotalBytes: 100 * MB });
  });

  it('streams a 40 MB upload while GET /api/health answers between its chunks', { timeout: 60_000 }, async () => {
    // The client sends the next chunk only once the health check has answered: a server that held its loop until
    // the whole upload had arrived would never answer, and the upload would never finish.
    const answeredAfterChunk: number[] = [];
    const answer = await slowUpload(port, {
      auth,
      field: 'records',
      fileBytes: 40 * MB,
      between: async (chunk) => {
        if (chunk % 8 !== 4) return;
        const health = await fetch(`http://127.0.0.1:${port}/api/health`);
        expect(health.status).toBe(200);
        answeredAfterChunk.push(chunk);
      },
    });

    expect(answeredAfterChunk).toEqual([4, 12, 20, 28, 36]);
    // Under the limit, the whole file reached the route: it answers about the missing dictionary, not the size.
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('Send the REDCap data dictionary CSV as "dictionary"');
  });

  it('answers 413 as soon as a streamed file passes 50 MB, without reading the rest', async () => {
    const answer = await slowUpload(port, { auth, field: 'records', fileBytes: 200 * MB, chunked: true });

    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('UPLOAD_TOO_LARGE');
    expect(answer.body.message).toBe('The file "records.csv" sent as "records" is larger than 50 MB, the limit per file (UPLOAD_MAX_BYTES). Split it (a REDCap export by site, form or event), or ask the server\'s operator to raise UPLOAD_MAX_BYTES.');
    expect(answer.sentWhenAnswered).toBeLessThan(60 * MB);
    // The server is fine afterwards.
    expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
  }, 60_000);

  it('refuses a request whose declared size is over the total before reading it', async () => {
    const answer = await slowUpload(port, { auth, field: 'records', fileBytes: 120 * MB });
    expect(answer.status).toBe(413);
    expect(answer.body.message).toContain('more than the 100 MB allowed for all files of one request (UPLOAD_MAX_TOTAL_BYTES)');
    expect(answer.sentWhenAnswered).toBeLessThan(20 * MB);
  }, 60_000);

  it('limits file count, total size, field count and field size with a clear 413', async () => {
    const form = (parts: Array<{ name: string; filename?: string; content: string }>) => {
      const body = parts
        .map((part) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}\r\n\r\n${part.content}\r\n`)
        .join('');
      return { payload: `${body}--${BOUNDARY}--\r\n`, headers: { authorization: auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } };
    };
    const post = (parts: Parameters<typeof form>[0]) => small.inject({ method: 'POST', url: '/api/iit/projects/trial-u/imports', ...form(parts) });
    const kb = (n: number) => 'x'.repeat(n * 1024);

    const oneFileTooLarge = await post([{ name: 'records', filename: 'records.csv', content: kb(2) }]);
    expect(oneFileTooLarge.statusCode).toBe(413);
    expect(oneFileTooLarge.json().message).toContain('is larger than 1 KB, the limit per file (UPLOAD_MAX_BYTES)');

    const overTotal = await post([{ name: 'dictionary', filename: 'd.csv', content: 'x'.repeat(900) }, { name: 'records', filename: 'r.csv', content: 'x'.repeat(900) }]);
    expect(overTotal.statusCode).toBe(413);
    expect(overTotal.json().message).toContain('The files of this request are larger than 1.5 KB together (UPLOAD_MAX_TOTAL_BYTES); "r.csv" went over it.');

    const tooManyFiles = await post(['dictionary', 'events', 'arms', 'records', 'extra'].map((name) => ({ name, filename: `${name}.csv`, content: 'a' })));
    expect(tooManyFiles.statusCode).toBe(413);
    expect(tooManyFiles.json().message).toBe('This request carries more than 4 files; this route takes at most 4. Send only the files it asks for.');

    const tooManyFields = await post(Array.from({ length: 25 }, (_, i) => ({ name: `f${i}`, content: 'v' })));
    expect(tooManyFields.statusCode).toBe(413);
    expect(tooManyFields.json().message).toContain('more than 20 form fields');

    const longField = await post([{ name: 'note', content: kb(65) }]);
    expect(longField.statusCode).toBe(413);
    expect(longField.json().message).toContain('The form field "note" is longer than 64 KB');

    const cutOff = await small.inject({ method: 'POST', url: '/api/iit/projects/trial-u/imports', payload: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="records"; filename="r.csv"\r\n\r\nabc`, headers: { authorization: auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } });
    expect(cutOff.statusCode).toBe(400);
    expect(cutOff.json().message).toContain('The multipart body could not be read');
  });
});
