import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AppContext } from '../../context.js';
import { statusOf, type ErrorCode } from '../../core/errors.js';
import { packageRoot } from '../../core/paths.js';
import { buildServer } from '../../http/server.js';
import { registerWorkers } from '../../workers.js';
import { INTAKE_SCENARIO } from '../intake-agent.js';
import { readEventStream } from '../read-event-stream.js';
import { startScriptedModel, type RecordedRequest, type ScriptedModel, type ScriptedStep } from '../scripted-model.js';
import { buildTestContext } from '../test-context.js';
import type { Engine } from './target.js';
import { agentsSdkScenarioFiles } from './targets/scenario.js';

/**
 * One server on a test database for the whole suite on an engine, its model a scripted one whose answers the
 * running cell sets (healthy while a target prepares, the fault during the turn). Cells run one at a time, so the
 * requests recorded between two marks are the turn's model calls.
 */
export interface FaultServer {
  engine: Engine;
  ctx: AppContext;
  url: string;
  model: ScriptedModel;
  /** Answers every model call from now on. */
  answerWith(respond: (request: RecordedRequest) => ScriptedStep): void;
  /** fetch against the server as the holder of `token`, the body read as JSON or text. */
  call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }>;
  /**
   * The same request to a streaming route: every event as it came, what the person watched appear (the text
   * deltas joined), and the final `result` or `error` event's data. A refusal before the stream is plain JSON.
   */
  stream(path: string, token: string, body: unknown): Promise<StreamedTurn>;
  /** A directory for a target's files, removed on close. */
  tempDir(prefix: string): string;
  close(): Promise<void>;
}

export interface StreamedTurn {
  status: number;
  /** The final event's data (the route's result body), or the JSON body of a refusal. */
  body: any;
  /** `result`, `error`, `refused` (plain JSON before any event) or `none` (the stream ended without a final event). */
  ending: 'result' | 'error' | 'refused' | 'none';
  /** The text deltas, joined in order: what the person watched appear before the final event. */
  watched: string;
}

/**
 * The status a streamed turn ended with, as the JSON route would have answered it: 200 for a result, the error
 * code's status for an error event, 500 for a stream that ended without its final event.
 */
export function streamedStatus(turn: StreamedTurn): number {
  if (turn.ending === 'refused') return turn.status;
  if (turn.ending === 'result') return 200;
  if (turn.ending === 'none') return 500;
  return statusOf(turn.body?.code as ErrorCode) ?? 500;
}

/** The test-intake agent of the durable-run tests: a run that waits for a person's answer. */
export const WAITING_SCENARIO_ID = 'test-intake';

/**
 * Small limits so a timeout cell takes about a second: every call times out at 800 ms and is not retried
 * (the gateway's retry policy has its own tests; here one call is one request at the scripted model).
 */
const FAULT_ENV = {
  LLM_TIMEOUT_MS: '800',
  LLM_MAX_RETRIES: '0',
  QC_SWEEP_INTERVAL_MS: '60000',
  QC_STALE_MS: '60000',
  QC_CONCURRENCY: '1',
} as const;

export async function startFaultServer(engine: Engine, options: { skills: Record<string, string>; env?: Record<string, string> }): Promise<FaultServer> {
  const dirs: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  // The shipped scenarios as they are, their variants on the OpenAI Agents SDK engine, and the agent that waits for a person.
  const scenariosDir = tempDir('clinagent-faults-scenarios-');
  cpSync(path.join(packageRoot(), 'scenarios'), scenariosDir, { recursive: true });
  writeFileSync(path.join(scenariosDir, `${WAITING_SCENARIO_ID}.yaml`), INTAKE_SCENARIO);
  for (const [file, text] of Object.entries(agentsSdkScenarioFiles())) writeFileSync(path.join(scenariosDir, file), text);
  const skillsDir = tempDir('clinagent-faults-skills-');
  for (const [file, text] of Object.entries(options.skills)) writeFileSync(path.join(skillsDir, file), text);

  let respond: (request: RecordedRequest) => ScriptedStep = () => ({ status: 503, body: { error: { message: 'no cell is running', type: 'scripted' } } });
  const model = await startScriptedModel([], { respond: (request) => respond(request) });
  const ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL, startJobs: true, env: { ...FAULT_ENV, SCENARIOS_DIR: scenariosDir, SKILLS_DIR: skillsDir, ...options.env } });
  const workers = await registerWorkers(ctx);
  const app = await buildServer(ctx, { serveConsole: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });

  return {
    engine,
    ctx,
    url,
    model,
    answerWith: (next) => {
      respond = next;
    },
    async call(method, route, token, body) {
      const response = await fetch(`${url}${route}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON: the text is what the person would see.
      }
      return { status: response.status, body: parsed };
    },
    async stream(route, token, body) {
      const response = await fetch(`${url}${route}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
      if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
        const text = await response.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Not JSON: the text is what the person would see.
        }
        return { status: response.status, body: parsed, ending: 'refused', watched: '' };
      }
      let watched = '';
      let round: unknown;
      for await (const event of readEventStream(response)) {
        if (event.event === 'text_delta') {
          // As the console joins them: each round's text on its own paragraph.
          watched += `${watched && event.data?.round !== round ? '\n\n' : ''}${String(event.data?.text ?? '')}`;
          round = event.data?.round;
        }
        if (event.event === 'result' || event.event === 'error') return { status: response.status, body: event.data, ending: event.event, watched };
      }
      return { status: response.status, body: undefined, ending: 'none', watched };
    },
    tempDir,
    async close() {
      workers.stop();
      await app.close();
      await ctx.close();
      await model.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
