import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { count, eq } from 'drizzle-orm';
import pg from 'pg';
import { closeContext, createContext } from '../src/context.js';
import { loadConfig } from '../src/core/config.js';
import { openDatabase, queryRows, sql, type Database } from '../src/core/db/connect.js';
import { pendingActions } from '../src/core/db/schema/trial.js';
import { createLogger } from '../src/core/logger.js';
import { packageRoot } from '../src/core/paths.js';
import { createThrowawayDatabase, TEST_AUDIT_KEY } from '../src/testing/test-database.js';
import { getQcProgress, startQcRun, type QcProgress } from '../src/trial/qc/qc-runs.js';
import { advanceTaskRunQueue } from '../src/trial/qc/queues.js';
import { registerQcWorkers } from '../src/trial/qc/workers.js';
import { createTrialStore } from '../src/trial/store/trial-store.js';
import { createTrialQc } from '../src/trial/trial-qc.js';
import { printTable } from './stats.js';

/**
 * QC of QC_BENCH_RECORDS (default 10 000) records with a hard-rule skill, end to end: startQcRun, pg-boss
 * jobs, the real QC workers (registerQcWorkers), leases, step commits, queries and audit entries, until the
 * batch reports completed. Once on in-memory PGlite and once on a throwaway PostgreSQL database when one is
 * reachable (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://root@127.0.0.1:5432/test).
 *
 * QC workers in the process: QC_BENCH_CONCURRENCY (default 8, as `registerQcWorkers` would be given by
 * QC_CONCURRENCY on a server sized for batches).
 */
const RECORDS = Number(process.env.QC_BENCH_RECORDS ?? 10_000);
const CONCURRENCY = Number(process.env.QC_BENCH_CONCURRENCY ?? 8);
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
      },
    };
  });
}

type Engine = 'PGlite (in-memory)' | 'PostgreSQL';

async function benchEngine(engine: Engine, database: Database, skillsDir: string, records: ReturnType<typeof syntheticRecords>) {
  const config = loadConfig({ SKILLS_DIR: skillsDir, SCENARIOS_DIR: path.join(packageRoot(), 'scenarios'), DATA_DIR: path.join(tmpdir(), 'clinagent-bench-unused'), LOG_LEVEL: 'silent' });
  const ctx = await createContext(config, { database, startJobs: true, logger: createLogger('silent') });
  try {
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: PROJECT, name: 'QC bench' });
    const importStarted = performance.now();
    await store.importRecords(PROJECT, records, { actor: 'bench' });
    const importMs = performance.now() - importStarted;

    const qc = createTrialQc(ctx, `bench-${process.pid}`);
    const workers = await registerQcWorkers({ ...qc.sop, jobs: ctx.jobs!, skills: ctx.skills.list() }, { concurrency: CONCURRENCY });
    try {
      const started = performance.now();
      const run = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: PROJECT, skill: ctx.skills.get('bench-core'), actor: 'bench' });
      let progress: QcProgress = run;
      while (progress.status === 'running') {
        await new Promise((resolve) => setTimeout(resolve, 250));
        progress = (await getQcProgress(ctx.db, run.id))!;
      }
      const wallMs = performance.now() - started;
      if (progress.done !== records.length || progress.failed) throw new Error(`${engine}: the batch ended with ${JSON.stringify(progress)}`);
      const [queries] = await ctx.db.select({ n: count() }).from(pendingActions).where(eq(pendingActions.projectId, PROJECT));
      // More jobs than records means the orphan sweep re-enqueued runs that were only waiting in the queue.
      const [jobs] = await queryRows<{ n: number }>(ctx.db, sql`select count(*)::int as n from pgboss.job where name = ${advanceTaskRunQueue.name}`);
      return {
        engine,
        records: records.length,
        workers: CONCURRENCY,
        'import s': importMs / 1000,
        'QC wall s': wallMs / 1000,
        'records/s': Math.round(records.length / (wallMs / 1000)),
        'for review': progress.suspended,
        queries: Number(queries?.n ?? 0),
        'advance jobs': Number(jobs?.n ?? 0),
      };
    } finally {
      workers.stop();
    }
  } finally {
    await closeContext(ctx);
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
  const records = syntheticRecords(RECORDS);
  const rows = [];
  try {
    rows.push(await benchEngine('PGlite (in-memory)', await openDatabase({ auditKey: TEST_AUDIT_KEY }), skillsDir, records));
    const serverUrl = await reachablePostgres();
    if (serverUrl) {
      const throwaway = await createThrowawayDatabase(serverUrl);
      try {
        rows.push(await benchEngine('PostgreSQL', await openDatabase({ databaseUrl: throwaway.url, auditKey: TEST_AUDIT_KEY }), skillsDir, records));
      } finally {
        await throwaway.drop();
      }
    }
  } finally {
    rmSync(skillsDir, { recursive: true, force: true });
  }
  printTable(`QC batch: ${RECORDS} records x 12 hard rules, ${CONCURRENCY} QC workers in one process, Node ${process.version}`, rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
