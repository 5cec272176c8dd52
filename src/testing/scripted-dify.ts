import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';

/**
 * A Dify-compatible app API on loopback (notes agent-engines.md section 5), for engine tests without a Dify:
 * `POST /chat-messages`, `/completion-messages` and `/workflows/run` answer each request with the next scripted
 * step, as a stream of `data: {json}` events (task, message and conversation ids filled in as Dify does; a
 * workflow's `workflow_run_id` instead) with bare `event: ping` lines where the script says `'ping'`, or as an
 * HTTP error with Dify's `{code, message, status}` body. A step may name the start-form variables the app
 * requires: a request without one is refused as Dify refuses it ("<var> is required in input form"). The stop
 * endpoints of each API are recorded. Any request without `Authorization: Bearer app-...` gets Dify's 401.
 */
export type DifyStreamItem = 'ping' | Record<string, unknown>;

export type DifyStep =
  /** A streamed answer. `holdOpen`: the stream stays open after the events, until the client goes away. */
  | { events: DifyStreamItem[]; holdOpen?: boolean; requiredInputs?: string[] }
  | { status: number; body: { code: string; message: string; status: number } };

const RUN_PATHS = new Set(['/v1/chat-messages', '/v1/completion-messages', '/v1/workflows/run']);
const STOP_PATH = /^\/v1\/(chat-messages|completion-messages|workflows\/tasks)\/[^/]+\/stop$/;

export interface RecordedDifyRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface ScriptedDify {
  /** Ends in /v1, as a Dify base URL does. */
  baseURL: string;
  requests: RecordedDifyRequest[];
  /** Requests to the stop endpoint, in order. */
  stops: RecordedDifyRequest[];
  push(...steps: DifyStep[]): void;
  close(): Promise<void>;
}

export async function startScriptedDify(steps: DifyStep[] = []): Promise<ScriptedDify> {
  const script = [...steps];
  const requests: RecordedDifyRequest[] = [];
  const stops: RecordedDifyRequest[] = [];
  const sockets = new Set<Socket>();
  let taskCounter = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any = text;
      try {
        body = JSON.parse(text || 'null');
      } catch {
        // kept as text
      }
      const recorded: RecordedDifyRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      if (!/^Bearer app-\S+$/.test(req.headers.authorization ?? '')) {
        send(res, 401, { code: 'unauthorized', message: 'Access token is invalid', status: 401 });
        return;
      }
      if (STOP_PATH.test(recorded.path)) {
        stops.push(recorded);
        send(res, 200, { result: 'success' });
        return;
      }
      if (!RUN_PATHS.has(recorded.path) || req.method !== 'POST') {
        send(res, 404, { code: 'not_found', message: 'The requested URL was not found on the server.', status: 404 });
        return;
      }
      requests.push(recorded);
      const step = script.shift();
      if (!step) {
        send(res, 500, { code: 'internal_server_error', message: 'scripted Dify: the script has no more steps', status: 500 });
        return;
      }
      if ('status' in step) {
        send(res, step.status, step.body);
        return;
      }
      const missing = (step.requiredInputs ?? []).find((name) => body?.inputs?.[name] === undefined || body.inputs[name] === '');
      if (missing) {
        send(res, 400, { code: 'invalid_param', message: `${missing} is required in input form`, status: 400 });
        return;
      }
      const ids =
        recorded.path === '/v1/workflows/run'
          ? { task_id: `task-${++taskCounter}`, workflow_run_id: randomUUID() }
          : { task_id: `task-${++taskCounter}`, message_id: randomUUID(), conversation_id: typeof body?.conversation_id === 'string' && body.conversation_id ? body.conversation_id : randomUUID() };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const item of step.events) {
        if (item === 'ping') res.write('event: ping\n\n');
        // Dify's error event carries no ids (notes section 1).
        else res.write(`data: ${JSON.stringify(item.event === 'error' ? item : { ...ids, created_at: 1_760_000_000, ...item })}\n\n`);
      }
      if (!step.holdOpen) res.end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    stops,
    push: (...more) => script.push(...more),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
