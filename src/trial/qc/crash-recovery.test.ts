import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database } from '../../core/db/connect.js';
import { runMigrations } from '../../core/db/migrate.js';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { createJobs, type Jobs } from '../../core/jobs/boss.js';
import { createLogger } from '../../core/logger.js';
import { packageRoot } from '../../core/paths.js';
import { createThrowawayDatabase, TEST_AUDIT_ENV, TEST_AUDIT_KEY } from '../../testing/test-database.js';
import { startScriptedModel } from '../../testing/scripted-model.js';
import { childEnv } from '../../testing/child-env.js';
import { crashCheckSkill } from '../../testing/crash-check-skill.js';
import { loadSkill, type Skill } from '../sop/load-skills.js';
import { createTrialStore } from '../store/trial-store.js';
import { getQcProgress, startQcRun, type QcProgress } from './qc-runs.js';
import { reviewTaskRun } from './workers.js';
import { waitFor } from '../../testing/wait-for.js';

/**
 * The acceptance test of crash recovery: a `clinagent worker` process is SIGKILLed in the middle of a batch
 * on real PostgreSQL, a run it had suspended for review is approved while no worker runs, and a new worker
 * finishes the batch. Runs the killed worker was advancing stay RUNNING under its lease and their pg-boss
 * jobs stay active for 15 minutes; the test relies on neither expiring job nor luck: the new worker's orphan
 * sweep takes them over once their (short, QC_LEASE_MS) lease lapses, within 10 s of the new worker being up.
 */

const RECORDS = 300;
/** Each soft-rule answer takes this long, so a kill lands while runs are mid-node, not between them. */
const MODEL_DELAY_MS = 300;
// Lease, sweep and staleness at their defaults: the promise is recovery within 10 s as shipped (issue 35).
const WORKER_ENV = { QC_CONCURRENCY: '8' };
/** How soon after the new worker is up a run left mid-node by the killed one must be moving again, with the defaults. */
const RECOVERY_DEADLINE_MS = 10_000;
const BATCH_TIMEOUT_MS = 120_000;

const SKILL = crashCheckSkill({ id: 'crash-check', name: 'Crash recovery check', instruction: 'Judge whether the adverse event text is plausible for the recorded vital signs.' });

interface SeededRecord {
  recordId: string;
  data: Record<string, unknown>;
  /** The rule ids this record must violate, derived from how it was built. */
  violations: string[];
}

/** Every 10th record is too old, every 25th consented late, every 40th lacks a weight; some break two rules. */
function seededRecords(): SeededRecord[] {
  return Array.from({ length: RECORDS }, (_, index) => {
    const i = index + 1;
    const violations: string[] = [];
    const data: Record<string, unknown> = { age: 40, consent_date: '2025-03-01', enrollment_date: '2025-03-10', weight_kg: 70, ae_text: 'none' };
    if (i % 10 === 3) (data.age = 90), violations.push('age-range');
    if (i % 25 === 13) (data.consent_date = '2025-03-12'), violations.push('consent-first');
    if (i % 40 === 21) (data.weight_kg = null), violations.push('weight-required');
    return { recordId: `S${String(i).padStart(3, '0')}`, data, violations };
  });
}

/** Every answer is a passing verdict, sent after MODEL_DELAY_MS. */
async function startSlowModel(): Promise<{ baseURL: string; requests: () => number; close(): Promise<void> }> {
  const verdict = JSON.stringify({ passed: true, reason: 'plausible', confidence: 0.9, evidence: 'ae_text: none' });
  const model = await startScriptedModel([], { fallback: { reply: verdict, delayMs: MODEL_DELAY_MS } });
  return { baseURL: model.baseURL, requests: () => model.requests.length, close: () => model.close() };
}

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
}

const workers = new Set<ChildProcess>();

/** Starts the worker process and resolves once it prints `ready`, i.e. its queues are created and polled. */
async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/testing/qc-worker-process.ts'], {
    cwd: packageRoot(),
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.add(child);
  child.on('exit', () => workers.delete(child));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!/^ready \d+$/m.test(output)) {
    if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode} before it was ready:\n${output}`);
    if (Date.now() > deadline) throw new Error(`worker not ready after 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, output: () => output };
}

describe.runIf(process.env.TEST_DATABASE_URL)('QC batch survives a killed worker (PostgreSQL; skipped without TEST_DATABASE_URL)', () => {
  let throwaway: { url: string; drop(): Promise<void> };
  let database: Database;
  let jobs: Jobs | undefined;
  let model: Awaited<ReturnType<typeof startSlowModel>>;
  let skillsDir: string;
  let skill: Skill;
  let workerEnv: Record<string, string>;
  const records = seededRecords();

  beforeAll(async () => {
    throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!);
    database = await openDatabase({ databaseUrl: throwaway.url, poolSize: 4, auditKey: TEST_AUDIT_KEY });
    await runMigrations(database);
    skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-crash-skills-'));
    writeFileSync(path.join(skillsDir, 'crash-check.yaml'), SKILL);
    skill = loadSkill(path.join(skillsDir, 'crash-check.yaml'));
    model = await startSlowModel();
    workerEnv = { DATABASE_URL: throwaway.url, SKILLS_DIR: skillsDir, LLM_BASE_URL: model.baseURL, LLM_MODEL: 'slow-model', LLM_API_KEY: 'sk-test-000000000000', LLM_TIMEOUT_MS: '10000', LOG_LEVEL: 'error', ...TEST_AUDIT_ENV, ...WORKER_ENV };

    const store = createTrialStore(database.db);
    await store.ensureProject({ id: 'crash', name: 'Crash recovery trial' });
    await store.replaceEvents('crash', [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
    await store.importRecords('crash', records.map((r) => ({ recordId: r.recordId, eventName: 'baseline', site: 'SITE-01', data: r.data as never })), { actor: 'test' });
  });

  afterAll(async () => {
    for (const child of workers) child.kill('SIGKILL');
    await jobs?.stop();
    await database?.close();
    await throwaway?.drop();
    await model?.close();
    if (skillsDir) rmSync(skillsDir, { recursive: true, force: true });
  });

  it('checks every record exactly once across a SIGKILL and completes a run approved while no worker ran', async () => {
    const { db } = database;
    // This process only sends jobs (the batch, the review); it never works them, and does no maintenance.
    const first = await startWorker(workerEnv);
    jobs = await createJobs(database, createLogger('silent'), { supervise: false, schedule: false });
    const started = await startQcRun({ db, jobs }, { projectId: 'crash', skill, actor: 'test' });
    expect(started.total).toBe(RECORDS);

    // Kill while some runs are over, some wait for review, some are mid-node and the rest are still queued.
    const atKill = await waitFor(async () => {
      const p = (await getQcProgress(db, started.id))!;
      return p.done >= RECORDS * 0.2 && p.done <= RECORDS * 0.7 && p.suspended >= 1 && p.running >= 1 ? p : undefined;
    }, 'the batch to be part-way through', BATCH_TIMEOUT_MS, 20);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');

    // Runs under the dead worker's lease; a RUNNING run without one was handed back by its batch at the soft rule
    // and waits for its own job (advanceTaskRuns), which the next worker takes like any other.
    const stranded = await db.select().from(taskRuns).where(and(eq(taskRuns.qcRunId, started.id), eq(taskRuns.status, 'RUNNING'), isNotNull(taskRuns.leaseOwner)));
    expect(stranded.length, 'runs left mid-node by the killed worker').toBeGreaterThan(0);
    expect(stranded.every((r) => r.leaseUntil !== null)).toBe(true);
    const afterKill = (await getQcProgress(db, started.id))!;
    expect(afterKill.done).toBeLessThan(RECORDS);

    // A data manager approves a run suspended before the kill; only the job it queues is left to run.
    const [toApprove] = await db.select().from(taskRuns).where(and(eq(taskRuns.qcRunId, started.id), eq(taskRuns.status, 'SUSPENDED'))).limit(1);
    expect(toApprove, 'a run suspended before the kill').toBeDefined();
    await reviewTaskRun({ db, jobs }, toApprove!.id, 'approve', 'dm-alice', 'confirmed with the site');

    const killedAt = Date.now();
    const second = await startWorker(workerEnv);
    const restartedAt = Date.now();
    // Every run the killed worker held is picked up again (a new owner, or past its node) within the deadline.
    const strandedIds = stranded.map((r) => r.id);
    const resumed = async () => {
      const now = await db.select().from(taskRuns).where(inArray(taskRuns.id, strandedIds));
      return now.every((r) => r.status !== 'RUNNING' || !stranded.some((s) => s.id === r.id && s.leaseOwner === r.leaseOwner));
    };
    await waitFor(resumed, 'runs of the killed worker to be resumed', RECOVERY_DEADLINE_MS - (Date.now() - restartedAt), 100).catch(async (error: unknown) => {
      const now = await db.select({ id: taskRuns.id, status: taskRuns.status, node: taskRuns.currentNode, leaseOwner: taskRuns.leaseOwner, leaseUntil: taskRuns.leaseUntil, updatedAt: taskRuns.updatedAt }).from(taskRuns).where(inArray(taskRuns.id, strandedIds));
      const queued = await queryRows(db, sql`select data->>'taskRunId' as run, state, singleton_key, created_on, started_on from pgboss.job where data->>'taskRunId' in ${strandedIds} order by created_on`);
      throw new Error(`${String(error)}; ${restartedAt - killedAt} ms from the kill to the new worker; runs now: ${JSON.stringify(now)}\njobs: ${JSON.stringify(queued)}\nworker output:\n${second.output()}`);
    });
    const recovered = await db.select().from(auditLog).where(and(eq(auditLog.projectId, 'crash'), eq(auditLog.action, 'recovered')));
    expect(recovered.map((e) => e.entityId)).toEqual(expect.arrayContaining(strandedIds));
    let finished: QcProgress;
    try {
      finished = await waitFor(async () => {
        const p = (await getQcProgress(db, started.id))!;
        return p.status === 'waiting_review' ? p : undefined;
      }, 'the restarted worker to finish the batch', BATCH_TIMEOUT_MS, 200);
    } catch (error) {
      throw new Error(`${String(error)}\nkilled at ${JSON.stringify(atKill)}\nworker output:\n${second.output()}`);
    }
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');

    const failing = records.filter((r) => r.violations.length);
    expect(finished).toMatchObject({ total: RECORDS, done: RECORDS, pending: 0, running: 0, failed: 0, recovering: 0, suspended: failing.length - 1, completed: RECORDS - failing.length + 1 });

    // One run per record, each ended where its data says, with every node it passed saved once.
    const runs = await db.select().from(taskRuns).where(eq(taskRuns.qcRunId, started.id));
    expect(runs).toHaveLength(RECORDS);
    const byRecord = new Map(runs.map((r) => [r.recordId, r]));
    expect(byRecord.size).toBe(RECORDS);
    for (const record of records) {
      const run = byRecord.get(record.recordId)!;
      const nodes = run.steps.map((s) => s.node);
      if (run.id === toApprove!.id) {
        expect({ status: run.status, node: run.currentNode, nodes }).toEqual({ status: 'COMPLETED', node: 'end_confirmed', nodes: ['hard', 'dm_review', 'review', 'end_confirmed'] });
        expect(run.review).toMatchObject({ decision: 'approve', reviewer: 'dm-alice' });
      } else if (record.violations.length) {
        expect({ recordId: record.recordId, status: run.status, node: run.currentNode, nodes }).toEqual({ recordId: record.recordId, status: 'SUSPENDED', node: 'dm_review', nodes: ['hard', 'dm_review'] });
      } else {
        expect({ recordId: record.recordId, status: run.status, node: run.currentNode, nodes }).toEqual({ recordId: record.recordId, status: 'COMPLETED', node: 'end_ok', nodes: ['hard', 'soft', 'end_ok'] });
      }
    }

    // One query per violation: a hard node re-run after the crash raised none twice.
    const queries = await db.select().from(pendingActions).where(eq(pendingActions.projectId, 'crash'));
    const expected = failing.flatMap((r) => r.violations.map((rule) => `${r.recordId}:${rule}`)).sort();
    expect(queries.map((q) => `${q.recordId}:${q.ruleId}`).sort()).toEqual(expected);
    const opened = (await createTrialStore(db).listAudit('crash', { entityType: 'query' })).filter((e) => e.action === 'opened');
    expect(opened).toHaveLength(expected.length);

    // Every passing record was judged by the model at least once; a run killed mid-soft-node is judged again.
    expect(model.requests()).toBeGreaterThanOrEqual(RECORDS - failing.length);
  }, 2 * BATCH_TIMEOUT_MS + 30_000);
});
