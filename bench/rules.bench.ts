import jsonLogic from 'json-logic-js';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { RE2JS } from 're2js';
import { compileRules, createRuleEngine, MAX_MATCHING_STEPS_PER_RULE, MAX_VALUE_LENGTH, type CompiledRules, type HardRule, type Violation } from '../src/trial/rules/index.js';
import { isNumeric } from '../src/trial/rules/number-operators.js';
import { compileRedcapLogic } from '../src/trial/rules/redcap-logic/index.js';
import { printTable, summarise } from './stats.js';

/**
 * Hard-rule throughput: evaluations per second (records × rules) of our compiled engine (json-logic-engine
 * `build`, via compileRules) against the reference interpreter json-logic-js (`jsonLogic.apply`, as in the
 * seed's HardRuleEngine), on the same 17 standard-JSON-Logic rules and the same synthetic records. Both sides
 * build the same violation list, and the bench checks they agree before timing anything. The interpreted mode
 * of json-logic-engine (`run`) is shown for context. Records: RULES_BENCH_RECORDS (default 10000), timed
 * passes: RULES_BENCH_ROUNDS (default 10, after 2 warm-up passes). Then the cost of `matches` at its bounds and
 * the longest event-loop stall while four QC workers evaluate hostile records (issue 21).
 */
const RECORDS = Number(process.env.RULES_BENCH_RECORDS ?? 10_000);
const ROUNDS = Number(process.env.RULES_BENCH_ROUNDS ?? 10);
const WARMUP_ROUNDS = 2;

const v = (name: string) => ({ var: name });

/** Standard operators only, so json-logic-js can run every rule. ISO dates compare correctly as strings here (plain dates). */
const RULES: HardRule[] = [
  { id: 'age-range', field: 'age', logic: { '<=': [18, v('age'), 75] }, message: 'Age must be 18-75' },
  { id: 'sex-enum', field: 'sex', logic: { in: [v('sex'), ['M', 'F']] }, message: 'Sex must be M or F' },
  { id: 'consent-required', field: 'consent_date', logic: { '!!': v('consent_date') }, message: 'Consent date is required' },
  { id: 'consent-first', field: 'consent_date', logic: { '<=': [v('consent_date'), v('enrollment_date')] }, message: 'Consent must precede enrolment' },
  { id: 'enrolment-period', field: 'enrollment_date', logic: { '<=': ['2025-01-01', v('enrollment_date'), '2025-12-31'] }, message: 'Enrolment outside the study period', severity: 'warning' },
  { id: 'sbp-range', field: 'baseline_sbp', logic: { '<=': [70, v('baseline_sbp'), 250] }, message: 'SBP implausible' },
  { id: 'dbp-range', field: 'baseline_dbp', logic: { '<=': [40, v('baseline_dbp'), 150] }, message: 'DBP implausible' },
  { id: 'dbp-below-sbp', field: 'baseline_dbp', logic: { '<': [v('baseline_dbp'), v('baseline_sbp')] }, message: 'DBP must be below SBP' },
  { id: 'weight-range', field: 'weight_kg', logic: { '<=': [30, v('weight_kg'), 200] }, message: 'Weight implausible', severity: 'warning' },
  {
    id: 'bmi-plausible',
    field: 'weight_kg',
    logic: { '<=': [12, { '/': [v('weight_kg'), { '*': [{ '/': [v('height_cm'), 100] }, { '/': [v('height_cm'), 100] }] }] }, 60] },
    message: 'BMI implausible; check weight and height',
    severity: 'warning',
  },
  { id: 'visit2-after-enrolment', field: 'visit2_date', logic: { '>': [v('visit2_date'), v('enrollment_date')] }, message: 'V2 must follow enrolment' },
  { id: 'ae-onset', field: 'ae_onset_date', logic: { if: [{ '==': [v('adverse_event'), 'none'] }, true, { '!!': v('ae_onset_date') }] }, message: 'AE onset date is required' },
  { id: 'status-enum', field: 'status', logic: { in: [v('status'), ['screening', 'ongoing', 'completed', 'withdrawn']] }, message: 'Unknown status' },
  { id: 'withdrawal-reason', field: 'withdrawal_reason', logic: { or: [{ '!=': [v('status'), 'withdrawn'] }, { '!!': v('withdrawal_reason') }] }, message: 'Withdrawal reason is required' },
  { id: 'core-fields', field: 'subject_id', logic: { '!': { missing: ['subject_id', 'site', 'age', 'sex'] } }, message: 'Core fields are missing' },
  {
    id: 'pregnancy-test',
    field: 'pregnancy_test',
    logic: { if: [{ and: [{ '==': [v('sex'), 'F'] }, { '<': [v('age'), 55] }] }, { '==': [v('pregnancy_test'), 'negative'] }, true] },
    message: 'Negative pregnancy test required',
  },
  { id: 'site-code', field: 'site', logic: { in: ['SITE-', v('site')] }, message: 'Site must carry its SITE- code', severity: 'info' },
];

/** Seeded (mulberry32) so every run times the same records. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function syntheticRecords(count: number): Array<Record<string, unknown>> {
  const rand = random(11427);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const day = (offset: number) => new Date(Date.UTC(2025, 0, 1 + offset)).toISOString().slice(0, 10);
  const odd = () => rand() < 0.04; // about 4% of each value is off, so rules both pass and fail
  return Array.from({ length: count }, (_, i) => {
    const enrolment = Math.floor(rand() * 330);
    const sex = odd() ? 'X' : pick(['M', 'F']);
    const status = pick(['screening', 'ongoing', 'completed', 'withdrawn']);
    const adverseEvent = pick(['none', 'none', 'none', 'headache', 'nausea']);
    return {
      subject_id: `S${String(i + 1).padStart(5, '0')}`,
      site: odd() ? 'Unknown site' : pick(['SITE-01 北京协和', 'SITE-02 上海瑞金', 'SITE-03 华西']),
      age: odd() ? 90 : 18 + Math.floor(rand() * 58),
      sex,
      consent_date: odd() ? null : day(enrolment - Math.floor(rand() * (odd() ? -5 : 10))),
      enrollment_date: day(enrolment),
      baseline_sbp: odd() ? 300 : 100 + Math.floor(rand() * 80),
      baseline_dbp: 60 + Math.floor(rand() * 40),
      weight_kg: odd() ? 12 : 45 + Math.round(rand() * 600) / 10,
      height_cm: 150 + Math.floor(rand() * 40),
      visit2_date: day(enrolment + 25 + Math.floor(rand() * 7) - (odd() ? 40 : 0)),
      adverse_event: adverseEvent,
      ae_onset_date: adverseEvent === 'none' || odd() ? null : day(enrolment + 5),
      status,
      withdrawal_reason: status === 'withdrawn' && !odd() ? 'moved away' : null,
      pregnancy_test: sex === 'F' ? (odd() ? 'positive' : 'negative') : null,
    };
  });
}

/** The seed's HardRuleEngine.run on json-logic-js, producing the same violations as compileRules. */
function referenceRun(rules: HardRule[], data: Record<string, unknown>): Violation[] {
  const violations: Violation[] = [];
  for (const rule of rules) {
    try {
      if (jsonLogic.truthy(jsonLogic.apply(rule.logic as jsonLogic.RulesLogic, data))) continue;
      violations.push({ ruleId: rule.id!, field: rule.field, message: rule.message, severity: rule.severity ?? 'error', value: data[rule.field] ?? null });
    } catch (error) {
      violations.push({ ruleId: rule.id!, field: rule.field, message: `Rule ${JSON.stringify(rule.id)} could not be evaluated: ${String(error)}`, severity: 'error', value: data[rule.field] ?? null });
    }
  }
  return violations;
}

function timePasses(records: Array<Record<string, unknown>>, evaluate: (record: Record<string, unknown>) => Violation[]) {
  const samplesMs: number[] = [];
  let violations = 0;
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    const started = performance.now();
    let found = 0;
    for (const record of records) found += evaluate(record).length;
    const elapsedMs = performance.now() - started;
    if (round >= WARMUP_ROUNDS) samplesMs.push(elapsedMs);
    violations = found;
  }
  const { p50, mean } = summarise(samplesMs);
  return { p50, mean, evaluationsPerSecond: (records.length * RULES.length) / (p50 / 1000), violations };
}

export async function main(): Promise<void> {
  const records = syntheticRecords(RECORDS);
  const engine = createRuleEngine();
  const compiled = compileRules(RULES, { engine });

  // Same answers first: a fast engine that disagrees with the reference is not a result.
  for (const record of records) {
    const ours = JSON.stringify(compiled.run(record));
    const reference = JSON.stringify(referenceRun(RULES, record));
    if (ours !== reference) throw new Error(`engines disagree on ${String(record.subject_id)}: ${ours} vs ${reference}`);
  }

  const interpreted = (record: Record<string, unknown>) =>
    RULES.flatMap((rule) => (engine.logic.run(rule.logic, record) ? [] : [{ ruleId: rule.id!, field: rule.field, message: rule.message, severity: rule.severity ?? 'error', value: null } as Violation]));
  const results = [
    { engine: 'ClinAgent compileRules (json-logic-engine build)', ...timePasses(records, (record) => compiled.run(record)) },
    { engine: 'json-logic-engine run (interpreted, context)', ...timePasses(records, interpreted) },
    { engine: 'json-logic-js apply (reference)', ...timePasses(records, (record) => referenceRun(RULES, record)) },
  ];
  printTable(`Hard rules: ${RULES.length} rules × ${records.length} records, ${ROUNDS} timed passes, Node ${process.version}`, results.map((r) => ({
    engine: r.engine,
    'pass p50 ms': r.p50,
    'pass mean ms': r.mean,
    'evaluations/s': Math.round(r.evaluationsPerSecond),
    violations: r.violations,
  })));
  const ratio = results[0]!.evaluationsPerSecond / results[2]!.evaluationsPerSecond;
  console.log(`compiled / json-logic-js: ${ratio.toFixed(1)}x evaluations per second`);
  timeNestedQuantifierPattern(engine);
  timeLinearInputs();
  timeMatchesAtTheBounds();
  await timeEventLoopStallsOnHostileRecords();
}

/**
 * The `matches` operator on a pattern that makes a backtracking engine take minutes (V8's RegExp explores every
 * way to split the letters); re2js answers in linear time. Printed, never asserted: timings belong here.
 */
function timeNestedQuantifierPattern(engine: ReturnType<typeof createRuleEngine>): void {
  const rule = engine.compile({ matches: [{ var: 'x' }, '^(\\w+\\s?)*$'] });
  for (const length of [30, 1_000, MAX_VALUE_LENGTH - 1]) {
    const started = performance.now();
    const matched = rule({ x: 'a'.repeat(length) + '!' });
    console.log(`matches ^(\\w+\\s?)*$ on ${length} x "a" + "!": ${matched} in ${(performance.now() - started).toFixed(2)} ms`);
  }
}

/**
 * Inputs that a backtracking pattern or a quadratic parser would take seconds on: `is_number` on a long run of
 * digits that does not match, and REDCap logic of many conditions. Each twice as long as the row before, so a
 * linear cost shows as about 2x per row. The unit tests check the answers; the timings belong here.
 */
function timeLinearInputs(): void {
  const time = (work: () => unknown) => {
    const samplesMs: number[] = [];
    for (let sample = 0; sample < 5; sample++) {
      const started = performance.now();
      work();
      samplesMs.push(performance.now() - started);
    }
    return summarise(samplesMs).p50;
  };
  const rows = [
    ...[50_000, 100_000, 200_000].map((digits) => {
      const text = `${'1'.repeat(digits)}x`;
      return { input: `is_number on ${digits} digits + "x"`, 'p50 ms': time(() => isNumeric(text)) };
    }),
    ...[250, 500, 1_000].map((conditions) => {
      const logic = Array.from({ length: conditions }, (_, i) => `[f${i}] = ${i}`).join(' or ');
      return { input: `REDCap logic of ${conditions} conditions (${logic.length} characters)`, 'p50 ms': time(() => compileRedcapLogic(logic)) };
    }),
  ];
  printTable('Linear-time inputs: is_number and REDCap logic, 5 samples each', rows);
}

/** Deterministic a/b text, a different one for each seed: the input on which the patterns below are slowest. */
function abText(length: number, seed: number): string {
  const rand = random(seed);
  let text = '';
  for (let i = 0; i < length; i++) text += rand() < 0.5 ? 'a' : 'b';
  return text;
}

/**
 * Issue 21. One `matches` as slow as the bounds allow: patterns whose DFA explodes on random a/b text (re2js then
 * builds a state per character, and finally falls back to its NFA), each on the longest value its size may be
 * tested against within one rule's budget (instructions × (characters + 100) <= 500 000, at most 10 000
 * characters). Each sample gets a fresh engine and fresh text, so nothing is answered from cached DFA states.
 */
function timeMatchesAtTheBounds(): void {
  const patterns = ['^S\\d{3}$', '[ab]*a[ab]{20}$', '(?:[ab]*a[ab]{12}){3}$', '(?:[ab]*a[ab]{12}){6}$', '(?:[ab]*a[ab]{12}){30}$', '(?:[ab]*a[ab]{12}){60}$'];
  const rows = patterns.map((pattern) => {
    const instructions = RE2JS.compile(pattern).programSize();
    const length = Math.min(MAX_VALUE_LENGTH, Math.floor(MAX_MATCHING_STEPS_PER_RULE / instructions) - 100);
    const samplesMs: number[] = [];
    for (let sample = 0; sample < 5; sample++) {
      const rules = compileRules([{ id: 'format', field: 'code', logic: { matches: [{ var: 'code' }, pattern] }, message: 'wrong format' }]);
      const code = `${abText(length - 1, 7 + sample)}!`;
      const started = performance.now();
      const [violation] = rules.run({ code });
      samplesMs.push(performance.now() - started);
      if (violation?.message !== 'wrong format') throw new Error(`expected a plain violation for ${pattern}, got ${JSON.stringify(violation?.message)}`);
    }
    const { p50 } = summarise(samplesMs);
    return { pattern, instructions, characters: length, 'p50 ms': p50, 'max ms': Math.max(...samplesMs) };
  });
  printTable(`matches at the bounds: one rule, ${MAX_MATCHING_STEPS_PER_RULE} steps at most, 5 fresh samples each`, rows);
}

/**
 * Issue 21. How long rule evaluation holds the event loop while four QC workers (the default QC_CONCURRENCY) work
 * through hostile records: the longest gap between two turns of the loop is how long a health check could wait.
 * Each worker takes the next record, evaluates the skill's two rules, and waits one turn (a database round trip
 * in real QC). `run` holds the loop for whole records; `runInSlices` (what QC uses) for one rule at most.
 */
async function timeEventLoopStallsOnHostileRecords(): Promise<void> {
  const rules: HardRule[] = [
    { id: 'code-format', field: 'code', logic: { matches: [{ var: 'code' }, '(?:[ab]*a[ab]{12}){3}$'] }, message: 'wrong format' },
    { id: 'code-site-pattern', field: 'code', logic: { matches: [{ var: 'code' }, { var: 'pattern' }] }, message: "not the site's format" },
  ];
  const records = [
    { code: 'a'.repeat(100_000) + '!', pattern: '(a|aa|aaa){999}!' },
    ...Array.from({ length: 40 }, (_, i) => ({ code: `${abText(MAX_VALUE_LENGTH - 1, 100 + i)}!`, pattern: i % 2 ? `[ab]*a[ab]{${20 + (i % 20)}}$` : `(?:[ab]*a[ab]{${12 + (i % 9)}}){2}$` })),
  ];
  const rows = [];
  for (const mode of ['run', 'runInSlices'] as const) {
    const compiled = compileRules(rules);
    const evaluate = (record: Record<string, unknown>) => (mode === 'run' ? Promise.resolve(compiled.run(record)) : compiled.runInSlices(record));
    rows.push({ mode, records: records.length, ...(await longestStall(records, evaluate, compiled)) });
  }
  printTable('Event loop while 4 QC workers evaluate hostile records (100 kB values, {999} and slow patterns from the data)', rows);
}

async function longestStall(records: Array<Record<string, unknown>>, evaluate: (record: Record<string, unknown>) => Promise<Violation[]>, compiled: CompiledRules) {
  let longestMs = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  let next = 0;
  let violations = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = next++; i < records.length; i = next++) {
        const found = await evaluate(records[i]!);
        violations += found.length;
        await nextTurn();
      }
    }),
  );
  running = false;
  if (violations !== records.length * compiled.rules.length) throw new Error(`expected every rule to fire on every record, got ${violations} violations`);
  return { 'total ms': performance.now() - started, 'longest stall ms': longestMs };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
