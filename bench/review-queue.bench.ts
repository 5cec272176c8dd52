import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { startQcServer } from '../src/testing/qc-server.js';
import { hardRuleSkillYaml } from '../src/testing/skill-yaml.js';
import { createTrialStore } from '../src/trial/store/trial-store.js';
import { printTable, summarise } from './stats.js';

/**
 * The review queue of issue 32 (141 records waiting, 50.8 s to load as 148 requests): the list request the review
 * page makes for one page of 50 runs with their findings, the whole queue in one page, a bulk decision of 50 runs
 * with one comment, and the queue's size over three full QC runs on unchanged data (it must not grow). In-memory
 * PGlite, the HTTP API through Fastify's inject, the real QC workers.
 */
const QUEUE = Number(process.env.REVIEW_BENCH_RECORDS ?? 141);
const SAMPLES = 30;
const PROJECT = 'bench-review';
// Age and systolic pressure, each finding decided by a data manager before its query goes to the site.
const SKILL = hardRuleSkillYaml('bench-review', [
  '{ id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }',
  '{ id: sbp-range, field: sbp, logic: { and: [{ ">=": [{ var: sbp }, 80] }, { "<=": [{ var: sbp }, 200] }] }, message: "SBP must be 80-200" }',
], true);

export async function main(): Promise<void> {
  const server = await startQcServer({ engine: 'pglite', name: 'review-bench', skills: { 'bench-review': SKILL } });
  const { ctx, app } = server;
  try {
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: PROJECT, name: PROJECT });
    await store.replaceDictionary(PROJECT, ['record_id', 'age', 'sbp'].map((fieldName) => ({ fieldName, formName: 'f', fieldType: fieldName === 'record_id' ? 'text' : 'integer', label: fieldName, choices: [], validationMin: null, validationMax: null, required: true })), 'bench');
    await store.importRecords(PROJECT, Array.from({ length: QUEUE }, (_, i) => ({ recordId: `R${i + 1}`, eventName: '', site: 'SITE-01', data: { record_id: `R${i + 1}`, age: 90, sbp: 250 } })), { actor: 'bench' });
    const admin = await ctx.users.create({ name: 'bench-admin', role: 'admin' });
    const headers = { authorization: `Bearer ${admin.token}` };
    const call = (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

    const sizes: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = (await call('POST', `/api/iit/projects/${PROJECT}/qc-runs`, { skillId: 'bench-review' })).json() as { id: string };
      while (!['waiting_review', 'completed'].includes((await call('GET', `/api/iit/qc-runs/${started.id}`)).json().status)) await new Promise((r) => setTimeout(r, 100));
      sizes.push((await call('GET', `/api/iit/projects/${PROJECT}/task-runs?status=SUSPENDED&pageSize=1`)).json().total as number);
    }

    const timed = async (url: string) => {
      const samples: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const at = performance.now();
        const res = await call('GET', url);
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
        samples.push(performance.now() - at);
      }
      return summarise(samples);
    };
    const page = await timed(`/api/iit/projects/${PROJECT}/task-runs?status=SUSPENDED&pageSize=50`);
    const whole = await timed(`/api/iit/projects/${PROJECT}/task-runs?status=SUSPENDED&pageSize=500`);

    const first50 = (await call('GET', `/api/iit/projects/${PROJECT}/task-runs?status=SUSPENDED&pageSize=50`)).json().taskRuns as Array<{ id: string; reviewRequest: { dataHash?: string } }>;
    const at = performance.now();
    const decided = (await call('POST', `/api/iit/projects/${PROJECT}/reviews`, { decision: 'reject', comment: 'bench', items: first50.map((run) => ({ taskRunId: run.id, dataHash: run.reviewRequest.dataHash })) })).json() as { decided: number };
    const bulkMs = performance.now() - at;

    const fmt = (s: { p50: number; p99: number }) => `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`;
    printTable(`Review queue of ${QUEUE} records (PGlite, HTTP API)`, [
      { measure: 'queue size after full QC runs 1, 2, 3 (unchanged data)', value: sizes.join(', ') },
      { measure: 'review page: one request, 50 runs with their findings', value: fmt(page) },
      { measure: `whole queue in one page (${QUEUE} runs with findings)`, value: fmt(whole) },
      { measure: `bulk reject of 50 runs, one comment, one request (${decided.decided} decided)`, value: `${bulkMs.toFixed(0)} ms` },
    ]);
  } finally {
    await server.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await main();
