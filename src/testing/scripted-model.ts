import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible chat server on loopback that answers from a script. Tests and the live-less e2e run
 * use it so the real gateway, `openai` client, retries and parser all run over real HTTP; only the model's
 * words are scripted. A reply's `finishReason` ('length': cut off by max_tokens) replaces 'stop' in either mode.
 */
export type ScriptedStep =
  | { reply: string; model?: string; usage?: { prompt_tokens: number; completion_tokens: number }; delayMs?: number; reasoningContent?: string; stream?: StreamOptions; finishReason?: string }
  | { toolCalls: Array<{ name: string; arguments: unknown; id?: string }>; content?: string; usage?: { prompt_tokens: number; completion_tokens: number }; stream?: StreamOptions }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { stallMs: number }
  | { rawBody: string };

/**
 * How a step is sent when the request asks for `stream: true` (OpenAI SSE chunks). Non-streaming requests
 * ignore it.
 */
export interface StreamOptions {
  /** The reply's text in exactly these pieces (they must join to `reply`); else cut every `pieceChars`. */
  pieces?: string[];
  /** Characters per text or argument piece; default 4. */
  pieceChars?: number;
  /** false: ignore `stream_options.include_usage`, as some OpenAI-compatible servers do. */
  sendUsage?: boolean;
  /** Close the connection after this many chunks, without a finish_reason or [DONE]: a dropped stream. */
  dropAfterChunks?: number;
  /**
   * Send nothing more after this many chunks, keeping the connection open: a model that stalls mid-answer. A client
   * that cancels after the first pieces is then sure to do so mid-stream, however slow the machine; close() ends it,
   * and the request's `stream.resume()` sends the rest (a test that looks at a half-written answer, then the whole).
   */
  stallAfterChunks?: number;
}

/** What happened to a streamed answer, updated while it is being sent. */
export interface StreamProgress {
  /** Chunks in the whole answer, usage chunk included ([DONE] not counted). */
  chunksPlanned: number;
  chunksSent: number;
  /** The client closed the connection before the last chunk. */
  isClientGone: boolean;
  isComplete: boolean;
  /** A stream held by `stallAfterChunks` goes on with the rest of its chunks (at once if it is already held). */
  resume(): void;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** Set when the answer was streamed. */
  stream?: StreamProgress;
}

export interface ScriptedModel {
  baseURL: string;
  requests: RecordedRequest[];
  /** Appends steps to the script. */
  push(...steps: ScriptedStep[]): void;
  /**
   * Holds the next request that arrives (after the ones already held) until the test releases it, so a test can
   * act while a model call is known to be in flight instead of sleeping and hoping it is.
   */
  gate(): Gate;
  close(): Promise<void>;
}

/** One held request: `reached` settles when it has arrived (and is recorded); `release()` lets its step be sent. */
export interface Gate {
  reached: Promise<RecordedRequest>;
  release(): void;
}

export interface ScriptedModelOptions {
  /** Answer used once the script is used up; without it the server answers 500 so a test notices. */
  fallback?: ScriptedStep | ((request: RecordedRequest) => ScriptedStep);
  /** Produce each step from the request instead of a fixed list. */
  respond?: (request: RecordedRequest) => ScriptedStep | undefined;
  /** Stream options for every step that sets none of its own. */
  stream?: StreamOptions;
}

export async function startScriptedModel(steps: ScriptedStep[] = [], options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const script = [...steps];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const gates: Array<{ reach: (request: RecordedRequest) => void; released: Promise<void> }> = [];
  const unreleased = new Set<() => void>();
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
      const gate = gates.shift();
      if (!gate) {
        respondWith(step, recorded, res);
        return;
      }
      // The step was taken on arrival, so requests arriving while this one is held keep the script's order.
      gate.reach(recorded);
      void gate.released.then(() => {
        if (!res.destroyed) respondWith(step, recorded, res);
      });
    });
  });

  function respondWith(step: ScriptedStep | undefined, recorded: RecordedRequest, res: http.ServerResponse): void {
    if (!step) {
      send(res, 500, { error: { message: 'scripted model: the script has no more steps', type: 'server_error' } });
      return;
    }
    if (recorded.body?.stream === true && ('reply' in step || 'toolCalls' in step)) streamAnswer(step, recorded, res);
    else answer(step, recorded.body, res);
  }

  function gate(): Gate {
    let reach!: (request: RecordedRequest) => void;
    let release!: () => void;
    const reached = new Promise<RecordedRequest>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    gates.push({ reach, released });
    unreleased.add(release);
    return {
      reached,
      release: () => {
        unreleased.delete(release);
        release();
      },
    };
  }

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
      send(res, 200, completion(id, model, message, 'tool_calls', step.usage));
      return;
    }
    const answerBody = completion(id, step.model ?? model, { role: 'assistant', content: step.reply, ...(step.reasoningContent === undefined ? {} : { reasoning_content: step.reasoningContent }) }, step.finishReason ?? 'stop', step.usage);
    if (!step.delayMs) {
      send(res, 200, answerBody);
      return;
    }
    // A slow model: the client may be gone by then (a killed worker), so only answer a live socket.
    setTimeout(() => {
      if (!res.destroyed) send(res, 200, answerBody);
    }, step.delayMs).unref();
  }

  /** The same answer as `answer` gives, as the OpenAI streaming API sends it: role, pieces, finish, usage, [DONE]. */
  function streamAnswer(step: Extract<ScriptedStep, { reply: string } | { toolCalls: unknown }>, recorded: RecordedRequest, res: http.ServerResponse): void {
    const body = recorded.body;
    const streamOptions: StreamOptions = { ...options.stream, ...step.stream };
    const id = `chatcmpl-${++counter}`;
    const model = ('reply' in step ? step.model : undefined) ?? body?.model ?? 'scripted-model';
    let chunks: StreamChunk[];
    try {
      chunks = streamChunks(step, counter, streamOptions);
    } catch (error) {
      send(res, 500, { error: { message: (error as Error).message, type: 'scripted' } });
      return;
    }
    const wantsUsage = body?.stream_options?.include_usage === true && streamOptions.sendUsage !== false;
    const usage = ('reply' in step || 'toolCalls' in step ? step.usage : undefined) ?? { prompt_tokens: 11, completion_tokens: 7 };
    if (wantsUsage) chunks.push({ choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
    let isResumed = false;
    let isStalled = false;
    const progress: StreamProgress = {
      chunksPlanned: chunks.length,
      chunksSent: 0,
      isClientGone: false,
      isComplete: false,
      resume: () => {
        isResumed = true;
        if (!isStalled) return;
        isStalled = false;
        schedule();
      },
    };
    recorded.stream = progress;
    let isDropped = false;
    res.on('close', () => {
      if (!progress.isComplete && !isDropped) progress.isClientGone = !res.writableFinished;
    });
    const created = Math.floor(Date.now() / 1000);
    const write = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const next = () => {
      if (res.destroyed) return;
      if (progress.chunksSent === streamOptions.dropAfterChunks) {
        isDropped = true;
        res.destroy();
        return;
      }
      if (progress.chunksSent === streamOptions.stallAfterChunks && !isResumed) {
        isStalled = true;
        return;
      }
      const chunk = chunks[progress.chunksSent];
      if (!chunk) {
        res.end('data: [DONE]\n\n');
        progress.isComplete = true;
        return;
      }
      write({ id, object: 'chat.completion.chunk', created, model, ...chunk });
      progress.chunksSent++;
      schedule();
    };
    // Chunks go out as fast as the loop turns; a test that must see an answer half-written holds it with
    // stallAfterChunks and resumes it, rather than pacing it and hoping to look in time.
    const schedule = () => setImmediate(next);
    const begin = () => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      schedule();
    };
    const delayMs = 'reply' in step ? step.delayMs : undefined;
    if (delayMs) setTimeout(begin, delayMs).unref();
    else begin();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => script.push(...more),
    gate,
    close: () =>
      new Promise<void>((resolve) => {
        // A held request whose test never released it is let go, so nothing waits on a closed server.
        for (const release of unreleased) release();
        unreleased.clear();
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

type StreamChunk = { choices: Array<{ index: number; delta: Record<string, unknown>; finish_reason: string | null }>; usage?: unknown } | { choices: []; usage: unknown };

function cut(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** The chunks of one streamed answer, before the usage chunk: first the role, then reasoning, text or tool calls. */
function streamChunks(step: Extract<ScriptedStep, { reply: string } | { toolCalls: unknown }>, counter: number, options: StreamOptions): StreamChunk[] {
  const size = Math.max(1, options.pieceChars ?? 4);
  const delta = (d: Record<string, unknown>, finish: string | null = null): StreamChunk => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
  const chunks: StreamChunk[] = [delta({ role: 'assistant', content: '' })];
  if ('reply' in step) {
    for (const piece of cut(step.reasoningContent ?? '', size)) chunks.push(delta({ reasoning_content: piece }));
    const pieces = options.pieces ?? cut(step.reply, size);
    if (pieces.join('') !== step.reply) throw new Error('scripted model: stream.pieces must join to the reply');
    for (const piece of pieces) chunks.push(delta({ content: piece }));
    chunks.push(delta({}, step.finishReason ?? 'stop'));
    return chunks;
  }
  for (const piece of cut(step.content ?? '', size)) chunks.push(delta({ content: piece }));
  step.toolCalls.forEach((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    chunks.push(delta({ tool_calls: [{ index, id: call.id ?? `call_${counter}_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of cut(args, size)) chunks.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(delta({}, 'tool_calls'));
  return chunks;
}
