import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../core/db/connect.js';
import { runMigrations } from '../../core/db/migrate.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { TEST_AUDIT_KEY } from '../test-database.js';
import { checkDatabase } from './chaos-checks.js';
import { chaosClient } from './chaos-client.js';
import { chaosFigures, measured } from './chaos-figures.js';
import { chaosProcess } from './chaos-process.js';
import { CHAOS_ADMIN_TOKEN, chaosStage } from './chaos-stage.js';
import { CHAOS_PROJECT } from './qc-batch-data.js';
import { resumeAfterRestart, resumeProbe, type StrandedRun } from './resume-probe.js';
import { chaosSeed, seededRandom } from './seeded-random.js';
import { startWorkload } from './workload.js';

/**
 * Chaos on the embedded database (issue 35): one `clinagent serve` on a PGlite data folder imports batches of records
 * and runs QC over them, started over HTTP, while it is SIGKILLed CHAOS_EMBEDDED_KILLS times (default 20) at seeded
 * random moments and started again at once. The folder must open every time (a lock whose owner died on this host is
 * taken over at once), every interrupted QC run must move again within 10 s of the server being back, and afterwards
 * the data is checked as on PostgreSQL (chaos-checks.ts), read from the folder itself.
 */
const KILLS = Number(process.env.CHAOS_EMBEDDED_KILLS ?? 20);
const RESUME_LIMIT_MS = 10_000;
const SETTLE_MS = 90_000;
/** The folder must open this soon after the server is started again, or the test fails naming the kill. */
const OPEN_DEADLINE_MS = 30_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chaos on the embedded database', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  });

  it(`keeps every promise while ${KILLS} SIGKILLs hit the server in the middle of QC writes and imports`, async () => {
    const began = Date.now();
    const random = seededRandom(chaosSeed());
    console.log(`chaos on the embedded database: seed ${random.seed} (CHAOS_SEED=${random.seed} replays it)`);
    let dataDir = '';
    const stage = await chaosStage('embedded', (workDir) => ({ DATA_DIR: (dataDir = path.join(workDir, 'data')) }));
    cleanup.push(() => stage.close());
    const setup = await openDatabase({ dataDir, auditKey: TEST_AUDIT_KEY });
    await runMigrations(setup);
    await createTrialStore(setup.db).ensureProject({ id: CHAOS_PROJECT, name: 'Chaos trial' });
    await setup.close();

    const server = chaosProcess({ name: 'server', kind: 'server', env: stage.env, url: stage.url, startDeadlineMs: OPEN_DEADLINE_MS });
    cleanup.push(() => server.kill().catch(() => undefined));
    await server.start();

    const client = chaosClient(stage.url, CHAOS_ADMIN_TOKEN, { retryForMs: SETTLE_MS });
    // Only the server can read its folder, so the runs are read over HTTP, like any client.
    const probe = resumeProbe(async (ids) => {
      const runs = new Map<string, { steps: number; status: string }>();
      for (const id of ids) {
        const answer = await client.send('GET', `/api/iit/task-runs/${id}`);
        if (answer.status === 200) runs.set(id, { steps: answer.body.steps.length, status: answer.body.status });
      }
      return runs;
    });
    const running = async (qcRunId: string | undefined): Promise<StrandedRun[]> => {
      if (!qcRunId) return [];
      const page = await client.send('GET', `/api/iit/projects/${CHAOS_PROJECT}/task-runs?status=RUNNING&qcRunId=${qcRunId}&pageSize=50`).catch(() => undefined);
      return page?.status === 200 ? (page.body.taskRuns as Array<{ id: string; steps: unknown[] }>).map((r) => ({ id: r.id, steps: r.steps.length })) : [];
    };

    const workload = startWorkload(client, { recordsPerBatch: 150, patients: 0, consults: 0, settleMs: SETTLE_MS });
    const kills: Array<{ process: string; kind: string }> = [];
    const failures: string[] = [];
    for (let kill = 1; kill <= KILLS; kill++) {
      // The runs the last kill interrupted get their chance to move first (up to the 10 s promise and a little more):
      // killed again before that, they would only be measured from the later kill.
      const settled = Date.now() + RESUME_LIMIT_MS + 2_000;
      while (probe.pending().some((r) => r.kill === kill - 1) && Date.now() < settled) await pause(100);
      await pause(random.between(500, 3_000));
      // The runs it holds a moment before the kill: the ones a kill leaves mid-node.
      const before = await running(workload.currentQcRun());
      const { at } = await server.kill();
      kills.push({ process: 'server', kind: 'server' });
      probe.killed(kill, 'server', at, before);
      try {
        const { readyAt } = await server.start();
        probe.restarted(kill, readyAt);
      } catch (error) {
        failures.push(`kill ${kill}: the data folder did not open again: ${(error as Error).message}`);
        break;
      }
    }
    await workload.stop();
    const deadline = Date.now() + SETTLE_MS;
    while (probe.pending().length && Date.now() < deadline) await pause(100);
    await probe.stop();
    await server.stop();

    // The folder opens once more, in this process, and holds everything that was promised.
    const database = await openDatabase({ dataDir, auditKey: TEST_AUDIT_KEY });
    try {
      failures.push(...workload.problems, ...(await checkDatabase(database.db, workload.ledger, { agentRuns: false })));
    } finally {
      await database.close();
    }
    const resumes = probe.resumes();
    const slow = measured(resumes).filter((r) => resumeAfterRestart(r) > RESUME_LIMIT_MS);
    if (slow.length) failures.push(`runs that resumed more than 10 s after the server was back: ${slow.map((r) => `${r.runId} (kill ${r.kill}: ${(resumeAfterRestart(r) / 1000).toFixed(1)} s)`).join(', ')}`);
    const stuck = probe.pending();
    if (stuck.length) failures.push(`interrupted runs that never moved again: ${stuck.map((r) => `${r.runId} (kill ${r.kill})`).join(', ')}`);
    for (const exit of server.exitsOnTheirOwn()) failures.push(`the server (pid ${exit.pid}) exited on its own (code ${exit.code}); its output ended:\n${exit.output}`);

    const opens = server.starts().slice(1).map((s) => s.readyAt - s.spawnedAt).sort((a, b) => a - b);
    console.log(chaosFigures({
      engine: 'embedded (PGlite data folder)', seed: random.seed, durationMs: Date.now() - began, processes: [server], kills, resumes,
      extra: [
        ['data folder opened after each kill (p50 / longest, to answering)', `${opens.length}/${kills.length}: ${(opens[Math.floor(opens.length / 2)]! / 1000).toFixed(1)} s / ${(opens.at(-1)! / 1000).toFixed(1)} s`],
        ['work done', `acknowledged: ${workload.ledger.imports.length} imports (${workload.ledger.imports.reduce((n, i) => n + i.records.length, 0)} records), ${workload.ledger.qcRuns.length} QC runs`],
      ],
    }));
    expect(failures, `seed ${random.seed}`).toEqual([]);
  }, 20 * 60_000);
});
