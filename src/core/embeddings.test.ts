import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiEmbedder } from './embeddings.js';
import type { ClinAgentError } from './errors.js';
import { operatorDetailOf } from './llm/errors.js';

interface ReceivedRequest {
  path: string;
  authorization?: string;
  body: { model: string; input: string[]; encoding_format?: string };
}

type Reply = (body: ReceivedRequest['body']) => { status: number; json: unknown };

/** A real HTTP server on 127.0.0.1 speaking the OpenAI embeddings API, so the real `openai` client runs. */
let server: Server;
let baseUrl: string;
let received: ReceivedRequest[] = [];
let reply: Reply;

/** A vector whose first component identifies the input, so tests can check the order of the result. */
const vectorFor = (text: string, dimension = 4) => [Number(text.replace(/\D/g, '') || 0), ...Array.from({ length: dimension - 1 }, () => 0.5)];

const ok = (body: ReceivedRequest['body'], dimension = 4) => ({
  status: 200,
  json: {
    object: 'list',
    model: body.model,
    // Reversed on purpose: servers may answer out of order and `index` is what counts.
    data: body.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorFor(text, dimension) })).reverse(),
    usage: { prompt_tokens: 1, total_tokens: 1 },
  },
});

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as ReceivedRequest['body'];
      received.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const { status, json } = req.method === 'POST' && req.url === '/v1/embeddings' ? reply(body) : { status: 404, json: { error: { message: 'no route' } } };
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received = [];
  reply = (body) => ok(body);
});

const embedderFor = (overrides: { batchSize?: number; apiKey?: string } = {}) =>
  createOpenAiEmbedder({ baseUrl, model: 'test-embed', apiKey: overrides.apiKey ?? 'sk-test-key-123456', timeoutMs: 5_000, maxRetries: 0, batchSize: overrides.batchSize });

describe('createOpenAiEmbedder', () => {
  it('embeds in batches, keeps input order and learns the dimension from the first answer', async () => {
    const embedder = embedderFor({ batchSize: 10 });
    expect(embedder.dimension).toBe(0);
    const texts = Array.from({ length: 25 }, (_, i) => `text ${i}`);
    const vectors = await embedder.embed(texts);

    expect(vectors.map((v) => v[0])).toEqual(texts.map((_, i) => i));
    expect(embedder.dimension).toBe(4);
    expect(received.map((r) => r.body.input.length).sort()).toEqual([10, 10, 5]);
    expect(received[0]).toMatchObject({ path: '/v1/embeddings', authorization: 'Bearer sk-test-key-123456', body: { model: 'test-embed', encoding_format: 'float' } });
  });

  it('makes no request for an empty list', async () => {
    expect(await embedderFor().embed([])).toEqual([]);
    expect(received).toHaveLength(0);
  });

  it('maps HTTP 401 to LLM_AUTH_FAILED, naming the embedding key to the operator', async () => {
    reply = () => ({ status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } } });
    const error = await embedderFor().embed(['a']).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_AUTH_FAILED', message: expect.stringContaining("The embedding service refused ClinAgent's credentials") });
    expect(operatorDetailOf(error)).toContain('EMBEDDING_API_KEY');
  });

  it('fails with EMBEDDING_FAILED when the server returns fewer vectors than texts', async () => {
    reply = (body) => {
      const answer = ok(body);
      (answer.json as { data: unknown[] }).data.pop();
      return answer;
    };
    const error = (await embedderFor().embed(['a', 'b']).then(() => undefined, (e: unknown) => e)) as ClinAgentError;
    expect(error).toMatchObject({ code: 'EMBEDDING_FAILED', message: expect.stringContaining('returned 1 vectors for 2 texts') });
    // The endpoint's address is the operator's: in the log and the trace (operatorDetailOf), never in the message.
    expect(error.message).not.toContain(baseUrl);
    expect(JSON.stringify(error.details)).not.toContain(baseUrl);
    expect(operatorDetailOf(error)).toContain(baseUrl);
  });

  it('fails with EMBEDDING_FAILED when vectors in one answer differ in dimension', async () => {
    reply = (body) => ({ status: 200, json: { object: 'list', model: body.model, data: body.input.map((_, index) => ({ object: 'embedding', index, embedding: Array(3 + index).fill(0.1) })) } });
    await expect(embedderFor().embed(['a', 'b'])).rejects.toMatchObject({ code: 'EMBEDDING_FAILED', message: expect.stringContaining('different dimensions') });
  });

  it('fails with EMBEDDING_FAILED when a later answer has another dimension than the first', async () => {
    const embedder = embedderFor();
    await embedder.embed(['a']);
    reply = (body) => ok(body, 8);
    await expect(embedder.embed(['b'])).rejects.toMatchObject({ code: 'EMBEDDING_FAILED', details: { expected: 4, received: 8 } });
    expect(embedder.dimension).toBe(4);
  });

  it('rejects a batch size below 1 when it is built', () => {
    expect(() => embedderFor({ batchSize: 0 })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
