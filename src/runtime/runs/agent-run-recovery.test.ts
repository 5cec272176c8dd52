import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../core/db/connect.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { packageRoot } from '../../core/paths.js';
import { childEnv } from '../../testing/child-env.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { createThrowawayDatabase, POSTGRES_TEMPLATE_ENV, TEST_AUDIT_ENV, TEST_AUDIT_KEY, testEngines } from '../../testing/test-database.js';
import { INTAKE_ADVICE, INTAKE_ASK, INTAKE_RESPOND, INTAKE_SCENARIO } from '../../testing/intake-agent.js';
import { waitFor } from '../../testing/wait-for.js';

/**
 * The acceptance test of durable agent runs (issue 22): a test agent of a few lines that waits for an answer. Its
 * worker process is SIGKILLed while the run waits, the answer is given to another process, that one is SIGKILLed
 * while the run works on it (the model is slow to reply), and a third process finishes the run: exactly once,
 * audited once per event, on both engines. A short lease (QC_LEASE_MS) keeps it to seconds, not the 15 s default.
 */
const SCENARIO = INTAKE_SCENARIO;
const ASK = INTAKE_ASK;
const ADVICE = INTAKE_ADVICE;
const RESPOND = INTAKE_RESPOND;
const ADMIN_TOKEN = 'agent-run-recovery-admin-token-0123456789';
const LEASE_ENV = { QC_LEASE_MS: '1500', QC_SWEEP_INTERVAL_MS: '300', QC_STALE_MS: '300', QC_CONCURRENCY: '2' };
/** Longer than the test: the reply the kill interrupts is held by the scripted model, never timed out. */
const LLM_TIMEOUT_MS = 120_000;

interface WorkerProcess {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
}

const children = new Set<ChildProcess>();

async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/testing/agent-worker-process.ts'], { cwd: packageRoot(), env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode} before it was ready:\n${output}`);
    return /^ready \d+ (\d+)$/m.exec(output)?.[1];
  }, 'the worker to be ready', 90_000, 50);
  return { child, baseUrl: `http://127.0.0.1:${ready}`, output: () => output };
}

async function kill(worker: WorkerProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = once(worker.child, 'exit');
  worker.child.kill(signal);
  await exited;
}

async function api<T>(worker: WorkerProcess, method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; json: T }> {
  const response = await fetch(`${worker.baseUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as T };
}

interface RunView { id: string; status: string; answer: string | null; waiting: { awaiting: string; prompt: string; dataHash?: string } | null }

describe.each(testEngines())('a durable agent run survives killed workers on %s', (engine) => {
  let workDir: string;
  let model: ScriptedModel;
  let throwaway: { url: string; drop(): Promise<void> } | undefined;
  let env: Record<string, string>;
  const dataDir = () => path.join(workDir, 'data');

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'clinagent-agent-recovery-'));
    const scenariosDir = path.join(workDir, 'scenarios');
    mkdirSync(scenariosDir);
    writeFileSync(path.join(scenariosDir, 'test-intake.yaml'), SCENARIO);
    model = await startScriptedModel([]);
    if (engine === 'postgres') throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!, process.env[POSTGRES_TEMPLATE_ENV]);
    env = {
      ...(throwaway ? { DATABASE_URL: throwaway.url } : { DATA_DIR: dataDir() }),
      SCENARIOS_DIR: scenariosDir, LLM_BASE_URL: model.baseURL, LLM_MODEL: 'scripted-model', LLM_API_KEY: 'sk-test-000000000000', LLM_TIMEOUT_MS: String(LLM_TIMEOUT_MS), LLM_MAX_RETRIES: '0',
      CLINAGENT_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'error', ...TEST_AUDIT_ENV, ...LEASE_ENV,
    };
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await model?.close();
    await throwaway?.drop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  /** A SIGKILL leaves the embedded folder's lock behind (it goes stale in 20 s); the test knows its owner is dead. */
  const releaseDeadLock = () => { if (!throwaway) rmSync(`${dataDir()}.lock`, { recursive: true, force: true }); };

  it('resumes exactly once on another process after a kill while it waits and a kill while it works', async () => {
    model.push({ reply: ASK }, { reply: RESPOND });
    const first = await startWorker(env);
    const started = await api<RunView>(first, 'POST', '/api/agent/runs', { scenarioId: 'test-intake', input: 'I have a cough.' });
    expect(started.status).toBe(202);
    const runId = started.json.id;
    const waiting = await waitFor(async () => { const { json } = await api<RunView>(first, 'GET', `/api/agent/runs/${runId}`); return json.status === 'SUSPENDED' ? json : undefined; }, 'the run to wait for an answer', 30_000, 50);
    expect(waiting.waiting).toMatchObject({ awaiting: 'answer', prompt: 'How long has the cough lasted?' });

    // Killed while the run waits: nothing is lost, and the answer goes to another process.
    await kill(first, 'SIGKILL');
    releaseDeadLock();
    const second = await startWorker(env);
    expect((await api<RunView>(second, 'GET', `/api/agent/runs/${runId}`)).json).toMatchObject({ status: 'SUSPENDED', waiting: { dataHash: waiting.waiting!.dataHash } });
    const withTheAnswer = model.gate();
    expect((await api<RunView>(second, 'POST', `/api/agent/runs/${runId}/answer`, { answer: 'three weeks', dataHash: waiting.waiting!.dataHash })).status).toBe(200);

    // Killed while it works on the answer: the model has the request and holds its reply.
    await withTheAnswer.reached;
    await kill(second, 'SIGKILL');
    releaseDeadLock();
    model.push({ reply: RESPOND });
    const third = await startWorker(env);
    const done = await waitFor(async () => { const { json } = await api<RunView>(third, 'GET', `/api/agent/runs/${runId}`); return json.status === 'COMPLETED' ? json : undefined; }, 'another process to finish the run', 30_000, 50);
    expect(done.answer).toBe(ADVICE);
    await kill(third, 'SIGTERM');

    // The model saw the answer once in each turn that followed it; the run and its audit, read from the database.
    expect(model.requests).toHaveLength(3);
    for (const request of model.requests.slice(1)) expect((request.body.messages as Array<{ content: string }>).filter((m) => m.content === 'three weeks')).toHaveLength(1);
    const database: Database = throwaway ? await openDatabase({ databaseUrl: throwaway.url, poolSize: 2, auditKey: TEST_AUDIT_KEY }) : await openDatabase({ dataDir: dataDir(), auditKey: TEST_AUDIT_KEY });
    try {
      const [run] = await database.db.select().from(agentRuns).where(eq(agentRuns.id, runId));
      expect(run!.steps.map((s) => `${String(s.node)}:${String(s.outcome)}`)).toEqual(['turn:suspended', 'review:answer', 'turn:pass', 'end:pass']);
      const messages = (run!.state as { messages: Array<{ role: string; content: string }> }).messages;
      expect(messages.filter((m) => m.content === 'three weeks')).toEqual([{ role: 'user', content: 'three weeks' }]);
      const audit = await database.db.select().from(auditLog).where(and(eq(auditLog.entityType, 'agent_run'), eq(auditLog.entityId, runId))).orderBy(asc(auditLog.id));
      expect(audit.map((e) => e.action)).toEqual(['created', 'waiting', 'decided', 'recovered', 'finished']);
    } finally {
      await database.close();
    }
  }, 240_000);
});
