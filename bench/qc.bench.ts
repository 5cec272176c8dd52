import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { closeContext, createContext } from '../src/context.js';
import { loadConfig } from '../src/core/config.js';
import { openDatabase, queryRows, sql, type Database } from '../src/core/db/connect.js';
import { runMigrations } from '../src/core/db/migrate.js';
import { verifyAuditChain } from '../src/core/audit/audit-log.js';
import { createJobs } from '../src/core/jobs/boss.js';
import { childEnv } from '../src/testing/child-env.js';
import { loadSkill } from '../src/trial/sop/load-skills.js';
import { createLogger } from '../src/core/logger.js';
import { packageRoot } from '../src/core/paths.js';
import { createThrowawayDatabase, TEST_AUDIT_ENV, TEST_AUDIT_KEY } from '../src/testing/test-database.js';
import { getQcProgress, startQcRun, type QcProgress } from '../src/trial/qc/qc-runs.js';
import { advanceTaskRunQueue } from '../src/trial/qc/queues.js';
import { registerQcWorkers } from '../src/trial/qc/workers.js';
import { createTrialStore } from '../src/trial/store/trial-store.js';
import { printTable } from './stats.js';

/**
 * QC of QC_BENCH_RECORDS (default 10 000) records with a 20-hard-rule skill, end to end: startQcRun, pg-boss batch
 * jobs, the real QC workers, leases, a saved step per node, queries and audit entries, until the batch has nothing
 * left to run (its failing records wait for review). On in-memory PGlite with the workers in this process
 * (QC_BENCH_CONCURRENCY, default 4), then on a throwaway PostgreSQL database (BENCH_DATABASE_URL, else
 * TEST_DATABASE_URL, else postgres://root@127.0.0.1:5432/test) with 1, 2 and 4 `clinagent worker` processes
 * (QC_CONCURRENCY QC_BENCH_PROCESS_CONCURRENCY, default 2, each), and the kill test: 2 processes, one SIGKILLed
 * part-way. Every row is checked for exactly once on the data (see exactlyOnce).
 */
const RECORDS = Number(process.env.QC_BENCH_RECORDS ?? 10_000);
const CONCURRENCY = Number(process.env.QC_BENCH_CONCURRENCY ?? 4);
/** QC_CONCURRENCY of each worker process in the PostgreSQL runs. */
const PROCESS_CONCURRENCY = Number(process.env.QC_BENCH_PROCESS_CONCURRENCY ?? 2);
const DEFAULT_POSTGRES_URL = 'postgres://root@127.0.0.1:5432/test';
const PROJECT = 'bench-qc';

const SKILL = `
id: bench-core
name: Core data checks (bench)
start_node: core
nodes:
  core:
    type: hard_rule
    rules:
      - { id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }
      - { id: sex-enum, field: sex, logic: { in: [{ var: sex }, [M, F]] }, message: "Sex must be M or F" }
      - { id: consent-required, field: consent_date, logic: { "!": { missing: [consent_date] } }, message: "Consent date is required" }
      - { id: consent-first, field: consent_date, logic: { or: [{ missing: [consent_date] }, { date_on_or_before: [{ var: consent_date }, { var: enrollment_date }] }] }, message: "Consent after enrolment" }
      - { id: enrolment-period, field: enrollment_date, logic: { and: [{ date_on_or_after: [{ var: enrollment_date }, "2025-01-01"] }, { date_on_or_before: [{ var: enrollment_date }, "2025-12-31"] }] }, message: "Enrolment outside the study period", severity: warning }
      - { id: v2-window, field: visit2_date, logic: { or: [{ missing: [visit2_date] }, { in_window: [{ var: visit2_date }, { var: enrollment_date }, 28, 3, 3] }] }, message: "V2 outside day 28 +/- 3", severity: warning }
      - { id: sbp-range, field: sbp, logic: { and: [{ ">=": [{ var: sbp }, 70] }, { "<=": [{ var: sbp }, 250] }] }, message: "SBP implausible" }
      - { id: dbp-range, field: dbp, logic: { and: [{ ">=": [{ var: dbp }, 40] }, { "<=": [{ var: dbp }, 150] }] }, message: "DBP implausible" }
      - { id: dbp-below-sbp, field: dbp, logic: { "<": [{ var: dbp }, { var: sbp }] }, message: "DBP must be below SBP" }
      - { id: weight-range, field: weight_kg, logic: { and: [{ ">=": [{ var: weight_kg }, 30] }, { "<=": [{ var: weight_kg }, 200] }] }, message: "Weight implausible", severity: warning }
      - { id: ae-onset-required, field: ae_onset_date, logic: { or: [{ "==": [{ var: adverse_event }, none] }, { "!": { missing: [ae_onset_date] } }] }, message: "AE onset date is required" }
      - { id: withdrawal-reason, field: withdrawal_reason, logic: { or: [{ "!=": [{ var: status }, withdrawn] }, { "!": { missing: [withdrawal_reason] } }] }, message: "Withdrawal reason is required" }
      - { id: status-enum, field: status, logic: { in: [{ var: status }, [screening, ongoing, completed, withdrawn]] }, message: "Unknown status" }
      - { id: sbp-required, field: sbp, logic: { "!": { missing: [sbp] } }, message: "SBP is required" }
      - { id: height-range, field: height_cm, logic: { and: [{ ">=": [{ var: height_cm }, 120] }, { "<=": [{ var: height_cm }, 220] }] }, message: "Height implausible", severity: warning }
      - { id: bmi-plausible, field: weight_kg, logic: { "<=": [12, { "/": [{ var: weight_kg }, { "*": [{ "/": [{ var: height_cm }, 100] }, { "/": [{ var: height_cm }, 100] }] }] }, 60] }, message: "BMI implausible; check weight and height", severity: warning }
      - { id: hr-range, field: heart_rate, logic: { and: [{ ">=": [{ var: heart_rate }, 35] }, { "<=": [{ var: heart_rate }, 180] }] }, message: "Heart rate implausible" }
      - { id: core-fields, field: subject_id, logic: { "!": { missing: [subject_id, age, sex, enrollment_date] } }, message: "Core fields are missing" }
      - { id: v2-after-enrolment, field: visit2_date, logic: { or: [{ missing: [visit2_date] }, { date_after: [{ var: visit2_date }, { var: enrollment_date }] }] }, message: "V2 must follow enrolment" }
      - { id: pregnancy-test, field: pregnancy_test, logic: { if: [{ and: [{ "==": [{ var: sex }, F] }, { "<": [{ var: age }, 55] }] }, { "==": [{ var: pregnancy_test }, negative] }, true] }, message: "Negative pregnancy test required" }
    on_pass: end_ok
    on_fail: dm_review
  dm_review:
    type: human_review
    description: A data manager confirms the findings before queries go to the site.
    on_approve: end_confirmed
    on_reject: end_rejected
`;

/** Seeded (mulberry32) so every run checks the same records. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One baseline event per subject; about 2% of each value is off, so some subjects pass and some go to review. */
function syntheticRecords(total: number) {
  const rand = random(20_250_101);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const day = (offset: number) => new Date(Date.UTC(2025, 0, 1 + offset)).toISOString().slice(0, 10);
  const odd = () => rand() < 0.02;
  return Array.from({ length: total }, (_, i) => {
    const enrolment = Math.floor(rand() * 330);
    const status = pick(['screening', 'ongoing', 'completed', 'withdrawn']);
    const adverseEvent = pick(['none', 'none', 'none', 'headache', 'nausea']);
    const recordId = `S${String(i + 1).padStart(5, '0')}`;
    return {
      recordId,
      eventName: 'baseline',
      site: pick(['SITE-01', 'SITE-02', 'SITE-03']),
      data: {
        age: odd() ? 90 : 18 + Math.floor(rand() * 58),
        sex: odd() ? 'X' : pick(['M', 'F']),
        consent_date: odd() ? null : day(enrolment - (odd() ? -5 : Math.floor(rand() * 10))),
        enrollment_date: day(enrolment),
        visit2_date: day(enrolment + 25 + Math.floor(rand() * 7) - (odd() ? 20 : 0)),
        sbp: odd() ? 300 : 100 + Math.floor(rand() * 80),
        dbp: 60 + Math.floor(rand() * 40),
        weight_kg: odd() ? 12 : 45 + Math.round(rand() * 600) / 10,
        adverse_event: adverseEvent,
        ae_onset_date: adverseEvent === 'none' || odd() ? null : day(enrolment + 5),
        status,
        withdrawal_reason: status === 'withdrawn' && !odd() ? 'moved away' : null,
        subject_id: recordId,
        height_cm: odd() ? 90 : 150 + Math.floor(rand() * 40),
        heart_rate: odd() ? 220 : 55 + Math.floor(rand() * 40),
        pregnancy_test: odd() ? 'positive' : 'negative',
      },
    };
  });
}

type Records = ReturnType<typeof syntheticRecords>;

type BatchResult = {
  setup: string;
  workers: string;
  records: number;
  'QC wall s': number;
  'records/s': number;
  'for review': number;
  queries: number;
  'single-run jobs': number;
  'peak RSS MB': number;
  'exactly once': string;
};

/** Peak resident memory of a process (Linux /proc VmHWM), in MB; NaN elsewhere. */
function peakRssMb(pid: number | 'self'): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Polls the batch until it has nothing left to run; returns its progress and the wall time from the start. */
async function untilDone(db: Database['db'], qcRunId: string, started: number, onProgress?: (p: QcProgress) => Promise<void>) {
  let progress = (await getQcProgress(db, qcRunId))!;
  while (progress.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 100));
    progress = (await getQcProgress(db, qcRunId))!;
    await onProgress?.(progress);
  }
  return { progress, wallMs: performance.now() - started };
}

/**
 * Exactly once, checked on the data rather than assumed: one query per finding key (and as many as the first,
 * uninterrupted run found), one `opened` audit entry per query, no run with a node saved twice, an intact audit
 * chain, and every run ended.
 */
async function exactlyOnce(db: Database['db'], qcRunId: string, expectedQueries: number | undefined): Promise<{ queries: number; verdict: string }> {
  const [queries] = await queryRows<{ n: number; keys: number }>(db, sql`select count(*)::int as n, count(distinct (record_id, event_name, rule_id, field))::int as keys from pending_actions where project_id = ${PROJECT}`);
  const [opened] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from audit_log where project_id = ${PROJECT} and entity_type = 'query' and action = 'opened'`);
  const [twice] = await queryRows<{ n: number }>(db, sql`
    select count(*)::int as n from task_runs r where r.qc_run_id = ${qcRunId}
      and (select count(*) from jsonb_array_elements(r.steps) s) <> (select count(distinct s->>'node') from jsonb_array_elements(r.steps) s)`);
  const chain = await verifyAuditChain(db, PROJECT);
  const problems = [
    queries!.n !== queries!.keys ? `${queries!.n - queries!.keys} duplicate queries` : '',
    expectedQueries !== undefined && queries!.n !== expectedQueries ? `${queries!.n} queries, expected ${expectedQueries}` : '',
    opened!.n !== queries!.n ? `${opened!.n} "opened" audit entries for ${queries!.n} queries` : '',
    twice!.n ? `${twice!.n} runs with a node saved twice` : '',
    chain.ok ? '' : `audit chain broken at entry ${chain.firstBadEntryId}`,
  ].filter(Boolean);
  return { queries: queries!.n, verdict: problems.length ? `NO: ${problems.join('; ')}` : `yes (audit chain ok, ${chain.entries} entries)` };
}

async function singleRunJobs(db: Database['db']): Promise<number> {
  // Jobs for one run: runs a batch handed back, or the orphan sweep re-enqueued (none expected with hard rules only).
  const [jobs] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from pgboss.job where name = ${advanceTaskRunQueue.name}`);
  return Number(jobs?.n ?? 0);
}

/** PGlite: one process owns the database, so its QC workers run in the bench process itself. */
async function benchInProcess(database: Database, skillsDir: string, records: Records): Promise<BatchResult> {
  const config = loadConfig({ SKILLS_DIR: skillsDir, SCENARIOS_DIR: path.join(packageRoot(), 'scenarios'), DATA_DIR: path.join(tmpdir(), 'clinagent-bench-unused'), LOG_LEVEL: 'silent' });
  const ctx = await createContext(config, { database, startJobs: true, logger: createLogger('silent') });
  try {
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: PROJECT, name: 'QC bench' });
    await store.importRecords(PROJECT, records, { actor: 'bench' });
    const workers = await registerQcWorkers({ ...ctx.trial.sop, workerId: `bench-${process.pid}`, jobs: ctx.jobs! }, { concurrency: CONCURRENCY });
    try {
      const started = performance.now();
      const run = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: PROJECT, skill: ctx.skills.get('bench-core'), actor: 'bench' });
      const { progress, wallMs } = await untilDone(ctx.db, run.id, started);
      if (progress.done !== records.length || progress.failed) throw new Error(`PGlite: the batch ended with ${JSON.stringify(progress)}`);
      const check = await exactlyOnce(ctx.db, run.id, undefined);
      return {
        setup: 'PGlite (in-memory), in process', workers: `1 process x ${CONCURRENCY}`, records: records.length, 'QC wall s': wallMs / 1000, 'records/s': Math.round(records.length / (wallMs / 1000)),
        'for review': progress.suspended, queries: check.queries, 'single-run jobs': await singleRunJobs(ctx.db), 'peak RSS MB': peakRssMb('self'), 'exactly once': check.verdict,
      };
    } finally {
      workers.stop();
    }
  } finally {
    await closeContext(ctx);
  }
}

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
}

/** A `clinagent worker` process (src/testing/qc-worker-process.ts), ready once it prints `ready <pid>`. */
async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/testing/qc-worker-process.ts'], { cwd: packageRoot(), env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 90_000;
  while (!/^ready \d+$/m.test(output)) {
    if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode} before it was ready:\n${output}`);
    if (Date.now() > deadline) throw new Error(`worker not ready after 90 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, output: () => output };
}

/**
 * PostgreSQL: `processes` worker processes on one database share the batch, as a deployment scales out. With
 * `killAt`, one of them is SIGKILLed once that share of the records is done; the others finish the batch (the
 * orphan sweep takes the killed one's runs once their lease lapses) and the data is checked for exactly once.
 */
async function benchProcesses(serverUrl: string, skillsDir: string, records: Records, processes: number, options: { killAt?: number; expectedQueries?: number } = {}): Promise<BatchResult> {
  const throwaway = await createThrowawayDatabase(serverUrl);
  const database = await openDatabase({ databaseUrl: throwaway.url, poolSize: 4, auditKey: TEST_AUDIT_KEY });
  const workers: WorkerProcess[] = [];
  let jobs: Awaited<ReturnType<typeof createJobs>> | undefined;
  try {
    await runMigrations(database);
    const store = createTrialStore(database.db);
    await store.ensureProject({ id: PROJECT, name: 'QC bench' });
    await store.importRecords(PROJECT, records, { actor: 'bench' });
    const env = { DATABASE_URL: throwaway.url, SKILLS_DIR: skillsDir, QC_CONCURRENCY: String(PROCESS_CONCURRENCY), LOG_LEVEL: 'error', ...TEST_AUDIT_ENV };
    workers.push(...(await Promise.all(Array.from({ length: processes }, () => startWorker(env)))));
    // This process only starts the batch and watches it; it works no jobs and does no maintenance.
    jobs = await createJobs(database, createLogger('silent'), { supervise: false, schedule: false });
    const skill = loadSkill(path.join(skillsDir, 'bench-core.yaml'));
    const started = performance.now();
    const run = await startQcRun({ db: database.db, jobs }, { projectId: PROJECT, skill, actor: 'bench' });
    let killed = false;
    const { progress, wallMs } = await untilDone(database.db, run.id, started, async (p) => {
      if (options.killAt === undefined || killed || p.done < records.length * options.killAt) return;
      killed = true;
      workers[0]!.child.kill('SIGKILL');
    });
    if (progress.done !== records.length || progress.failed) throw new Error(`PostgreSQL, ${processes} workers: the batch ended with ${JSON.stringify(progress)}\n${workers.map((w) => w.output()).join('\n')}`);
    const check = await exactlyOnce(database.db, run.id, options.expectedQueries);
    // The workers' memory, which batches keep flat however large the trial (the in-memory PGlite row holds the data too).
    const rss = Math.max(...workers.filter((w) => w.child.exitCode === null && w.child.pid).map((w) => peakRssMb(w.child.pid!)));
    return {
      setup: options.killAt === undefined ? 'PostgreSQL' : `PostgreSQL, kill test: 1 worker SIGKILLed at ${Math.round(options.killAt * 100)}%`,
      workers: `${processes} process${processes > 1 ? 'es' : ''} x ${PROCESS_CONCURRENCY}`, records: records.length, 'QC wall s': wallMs / 1000, 'records/s': Math.round(records.length / (wallMs / 1000)),
      'for review': progress.suspended, queries: check.queries, 'single-run jobs': await singleRunJobs(database.db), 'peak RSS MB': rss, 'exactly once': check.verdict,
    };
  } finally {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await jobs?.stop();
    await database.close();
    await throwaway.drop();
  }
}

async function reachablePostgres(): Promise<string | undefined> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? DEFAULT_POSTGRES_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return url;
  } catch (error) {
    console.log(`PostgreSQL at ${url} is not reachable (${(error as Error).message}); set BENCH_DATABASE_URL to include it.`);
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function main(): Promise<void> {
  const skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-bench-skills-'));
  writeFileSync(path.join(skillsDir, 'bench-core.yaml'), SKILL);
  const rules = Object.values(loadSkill(path.join(skillsDir, 'bench-core.yaml')).compiled).reduce((n, c) => n + c.rules.length, 0);
  const records = syntheticRecords(RECORDS);
  const rows: BatchResult[] = [];
  try {
    rows.push(await benchInProcess(await openDatabase({ auditKey: TEST_AUDIT_KEY }), skillsDir, records));
    const serverUrl = await reachablePostgres();
    if (serverUrl) {
      // A quarter of the trial first: a worker's peak memory should not grow with the trial.
      rows.push(await benchProcesses(serverUrl, skillsDir, records.slice(0, Math.ceil(records.length / 4)), 1));
      for (const processes of [1, 2, 4]) rows.push(await benchProcesses(serverUrl, skillsDir, records, processes, { expectedQueries: rows[0]!.queries }));
      rows.push(await benchProcesses(serverUrl, skillsDir, records, 2, { killAt: 0.4, expectedQueries: rows[0]!.queries }));
    }
  } finally {
    rmSync(skillsDir, { recursive: true, force: true });
  }
  printTable(`QC batch: records x ${rules} hard rules with per-step persistence (targets: 2 000 records/s on PostgreSQL, 500 on PGlite), Node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`, rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
