import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible chat server on loopback that answers from a script. Tests and the live-less e2e run
 * use it so the real gateway, `openai` client, retries and parser all run over real HTTP; only the model's
 * words are scripted.
 */
export type ScriptedStep =
  | { reply: string; model?: string; usage?: { prompt_tokens: number; completion_tokens: number }; delayMs?: number; reasoningContent?: string }
  | { toolCalls: Array<{ name: string; arguments: unknown; id?: string }>; content?: string }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { stallMs: number }
  | { rawBody: string };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface ScriptedModel {
  baseURL: string;
  requests: RecordedRequest[];
  /** Appends steps to the script. */
  push(...steps: ScriptedStep[]): void;
  close(): Promise<void>;
}

export interface ScriptedModelOptions {
  /** Answer used once the script is used up; without it the server answers 500 so a test notices. */
  fallback?: ScriptedStep | ((request: RecordedRequest) => ScriptedStep);
  /** Produce each step from the request instead of a fixed list. */
  respond?: (request: RecordedRequest) => ScriptedStep | undefined;
}

export async function startScriptedModel(steps: ScriptedStep[] = [], options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const script = [...steps];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  let counter = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const fallback = typeof options.fallback === 'function' ? options.fallback(recorded) : options.fallback;
      const step = options.respond?.(recorded) ?? script.shift() ?? fallback;
      if (!step) {
        send(res, 500, { error: { message: 'scripted model: the script has no more steps', type: 'server_error' } });
        return;
      }
      answer(step, body, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function answer(step: ScriptedStep, body: any, res: http.ServerResponse): void {
    const model = body?.model ?? 'scripted-model';
    const id = `chatcmpl-${++counter}`;
    if ('stallMs' in step) {
      setTimeout(() => {
        if (!res.writableEnded && !res.destroyed) send(res, 200, completion(id, model, { role: 'assistant', content: 'late' }, 'stop'));
      }, step.stallMs).unref();
      return;
    }
    if ('rawBody' in step) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(step.rawBody);
      return;
    }
    if ('status' in step) {
      send(res, step.status, step.body ?? { error: { message: `scripted status ${step.status}`, type: 'scripted' } }, step.headers);
      return;
    }
    if ('toolCalls' in step) {
      const message = {
        role: 'assistant',
        content: step.content ?? null,
        tool_calls: step.toolCalls.map((call, i) => ({
          id: call.id ?? `call_${counter}_${i}`,
          type: 'function',
          function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
        })),
      };
      send(res, 200, completion(id, model, message, 'tool_calls'));
      return;
    }
    const answerBody = completion(id, step.model ?? model, { role: 'assistant', content: step.reply, ...(step.reasoningContent === undefined ? {} : { reasoning_content: step.reasoningContent }) }, 'stop', step.usage);
    if (!step.delayMs) {
      send(res, 200, answerBody);
      return;
    }
    // A slow model: the client may be gone by then (a killed worker), so only answer a live socket.
    setTimeout(() => {
      if (!res.destroyed) send(res, 200, answerBody);
    }, step.delayMs).unref();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => script.push(...more),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function completion(id: string, model: string, message: unknown, finishReason: string, usage = { prompt_tokens: 11, completion_tokens: 7 }) {
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
