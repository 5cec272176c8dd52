import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../http/server.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { registerWorkers } from '../../workers.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';

/**
 * Issue 21: a `matches` rule on hostile data stalled the whole server (a 100 kB value tested against
 * `(a|aa|aaa){999}!` from the data kept /api/health waiting 41 s). QC runs in the server's process, so this
 * starts QC over such records through the API and measures how long the health check takes to answer meanwhile.
 */

/**
 * As slow as the bounds allow: about 48 instructions on 10 000 characters fills one rule's matching budget, and on
 * random a/b text the DFA of such a pattern explodes, so each test takes tens of milliseconds (0.1 s at worst).
 */
const SLOW_LITERAL = '(?:[ab]*a[ab]{12}){3}$';

/** Patterns the records carry, each different (no record reuses another's cached DFA states), each within the bounds. */
const SLOW_DATA_PATTERNS = [
  ...Array.from({ length: 12 }, (_, i) => `[ab]*a[ab]{${20 + i}}$`),
  ...Array.from({ length: 9 }, (_, i) => `(?:[ab]*a[ab]{${12 + i}}){2}$`),
];

const SKILL = `
id: hostile-formats
name: Code formats
start_node: formats
nodes:
  formats:
    type: hard_rule
    rules:
      - { id: code-format, field: code, logic: { matches: [{ var: code }, "${SLOW_LITERAL}"] }, message: "Code has the wrong format" }
      - { id: code-site-pattern, field: code, logic: { matches: [{ var: code }, { var: pattern }] }, message: "Code does not follow the site's pattern" }
    on_pass: end_ok
    on_fail: end_flagged
`;

/** Deterministic a/b text, different for every seed, so no record's match is answered from another's cached DFA states. */
function abText(length: number, seed: number): string {
  let state = seed * 2654435761 + 1;
  let text = '';
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    text += state & 0x10000 ? 'a' : 'b';
  }
  return text;
}

const field = (fieldName: string) => ({ fieldName, formName: 'f', fieldType: 'text' as const, label: fieldName, choices: [], validationMin: null, validationMax: null, required: false });
const record = (recordId: string, code: string, pattern: string): TrialRecord => ({ recordId, eventName: '', site: 'SITE-01', data: { record_id: recordId, code, pattern } });

const RECORDS: TrialRecord[] = [
  // The finding as filed: a 100 kB value and the pattern from the data.
  record('H1', 'a'.repeat(100_000) + '!', '(a|aa|aaa){999}!'),
  record('H2', 'a'.repeat(100_000), '(a|aa|aaa){99}!'),
  // As slow as the bounds allow: 10 000 characters that never match (the "!" at the end), slow patterns.
  ...SLOW_DATA_PATTERNS.map((pattern, i) => record(`S${i + 1}`, `${abText(9_999, i + 1)}!`, pattern)),
];

describe.each(testEngines())('QC over hostile patterns and values, on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let workers: { stop(): void };
  let skillsDir: string;
  let auth: { authorization: string };
  let healthUrl: string;

  beforeAll(async () => {
    skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-hostile-'));
    writeFileSync(path.join(skillsDir, 'hostile-formats.yaml'), SKILL);
    // Four workers (the default) evaluating at once: their slow rules must not add up within one turn of the loop.
    ctx = await buildTestContext({ engine, startJobs: true, env: { SKILLS_DIR: skillsDir, QC_CONCURRENCY: '4' } });
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'hostile', name: 'Hostile data' });
    await store.replaceDictionary('hostile', [field('record_id'), field('code'), field('pattern')], 'test');
    await store.importRecords('hostile', RECORDS, { actor: 'test' });
    const dm = await ctx.users.create({ name: 'dm', role: 'coordinator' });
    await ctx.users.addMember('hostile', dm.user.id);
    auth = { authorization: `Bearer ${dm.token}` };
    workers = await registerWorkers(ctx);
    app = await buildServer(ctx, { serveConsole: false });
    healthUrl = `${await app.listen({ host: '127.0.0.1', port: 0 })}/api/health`;
  }, 60_000);

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
    if (skillsDir) rmSync(skillsDir, { recursive: true, force: true });
  });

  // Retried: the bound is wall-clock time on a shared 2-core machine, where the suite's other worker process (and
  // PostgreSQL, and a browser) can take the cores for a moment (1.1 s was seen twice under such load, never alone).
  // The stall this guards against held the server 35-43 s on every attempt, so a retry cannot hide it.
  it('answers the health check within a second while QC works through them, and names the rule of each over-limit case', { retry: 2, timeout: 90_000 }, async () => {
    // A client polls the health check every 20 ms over a real socket, from before QC starts until it ends. It
    // lives in this process, so each wait is counted from when the request was due: a stall that delays the
    // sending counts too, as it would for a client elsewhere.
    expect((await fetch(healthUrl)).status).toBe(200); // the first request (connection, first route call) is not QC's doing
    const waitsMs: number[] = [];
    const statuses = new Set<number>();
    let isPolling = true;
    const poller = (async () => {
      while (isPolling) {
        const dueAt = performance.now() + 20;
        await new Promise((resolve) => setTimeout(resolve, 20));
        statuses.add((await fetch(healthUrl)).status);
        waitsMs.push(performance.now() - dueAt);
      }
    })();

    const started = await app.inject({ method: 'POST', url: '/api/iit/projects/hostile/qc-runs', headers: auth, payload: { skillId: 'hostile-formats' } });
    expect(started.statusCode, started.body).toBe(202);
    let progress = started.json();
    for (const deadline = Date.now() + 60_000; progress.status === 'running' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      progress = (await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${progress.id}`, headers: auth })).json();
    }
    isPolling = false;
    await poller;
    expect(Math.max(...waitsMs), `health check waits (ms): ${waitsMs.map(Math.round).join(', ')}`).toBeLessThan(1_000);
    expect([...statuses]).toEqual([200]);
    expect(waitsMs.length).toBeGreaterThan(3); // the checks really overlapped the run
    expect(progress).toMatchObject({ status: 'completed', done: RECORDS.length, failed: 0 });

    const queries = (await app.inject({ method: 'GET', url: '/api/iit/projects/hostile/queries', headers: auth })).json().queries as Array<{ recordId: string; ruleId: string; severity: string; message: string }>;
    const of = (recordId: string, ruleId: string) => queries.find((q) => q.recordId === recordId && q.ruleId === ruleId);
    expect(of('H1', 'code-format')).toMatchObject({ severity: 'error', message: expect.stringMatching(/^Rule "code-format" could not be evaluated: matches: the value is 100001 characters, over the 10000-character limit/) });
    expect(of('H1', 'code-site-pattern')).toMatchObject({ severity: 'error', message: expect.stringMatching(/^Rule "code-site-pattern" could not be evaluated: matches: pattern "\(a\|aa\|aaa\)\{999\}!" compiles to 8994 instructions, over the 1000-instruction limit/) });
    expect(of('H2', 'code-site-pattern')).toMatchObject({ severity: 'error', message: expect.stringMatching(/^Rule "code-site-pattern" could not be evaluated: matches: the value is 100000 characters/) });
    // Within the bounds the patterns really ran: the text matches neither, an ordinary finding on every record.
    for (const id of SLOW_DATA_PATTERNS.map((_, i) => `S${i + 1}`)) {
      expect(of(id, 'code-format')).toMatchObject({ message: 'Code has the wrong format' });
      expect(of(id, 'code-site-pattern')).toMatchObject({ message: "Code does not follow the site's pattern" });
    }
  });
});
