import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as pause } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../http/server.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { registerWorkers } from '../../workers.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';

/**
 * Issue 21: a `matches` rule on hostile data stalled the whole server (a 100 kB value tested against
 * `(a|aa|aaa){999}!` from the data kept /api/health waiting 41 s). QC runs in the server's process, so this
 * starts QC over such records through the API and measures how long the event loop is held meanwhile, while a
 * client keeps calling the health check. The figure on a quiet machine is `npm run bench:rules` ("Event loop while
 * 4 QC workers evaluate hostile records").
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

  it('keeps the event loop turning and the health check answering while QC works through them, and names the rule of each over-limit case', { timeout: 90_000 }, async () => {
    // The loop's own delay, not a health check's round trip (which the suite's other processes, PostgreSQL and a
    // browser on a shared 2-core machine inflate): the stall this guards against held the loop 35-43 s; a slice
    // holds it for one rule's bounded matching, and load adds about a second at worst.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    expect((await fetch(healthUrl)).status).toBe(200); // the first request (connection, first route call) is not QC's doing
    const statuses = new Set<number>();
    let answered = 0;
    let isPolling = true;
    const poller = (async () => {
      while (isPolling) {
        statuses.add((await fetch(healthUrl)).status);
        answered++;
        await pause(20); // a client's pace, not a wait for anything: the run's end is awaited on its state below
      }
    })();
    loopDelay.enable();

    const started = await app.inject({ method: 'POST', url: '/api/iit/projects/hostile/qc-runs', headers: auth, payload: { skillId: 'hostile-formats' } });
    expect(started.statusCode, started.body).toBe(202);
    const runId = started.json().id as string;
    const progress = await waitFor(async () => {
      const current = (await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${runId}`, headers: auth })).json();
      return current.status !== 'running' && current;
    }, 'the QC run to finish', 60_000);
    loopDelay.disable();
    isPolling = false;
    await poller;
    expect(loopDelay.max / 1e6, `event loop delay (ms): mean ${(loopDelay.mean / 1e6).toFixed(1)}, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)}`).toBeLessThan(5_000);
    expect([...statuses]).toEqual([200]);
    expect(answered).toBeGreaterThan(3); // the checks really overlapped the run
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
