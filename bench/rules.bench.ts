import jsonLogic from 'json-logic-js';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { compileRules, createRuleEngine, type HardRule, type Violation } from '../src/trial/rules/index.js';
import { printTable, summarise } from './stats.js';

/**
 * Hard-rule throughput: evaluations per second (records × rules) of our compiled engine (json-logic-engine
 * `build`, via compileRules) against the reference interpreter json-logic-js (`jsonLogic.apply`, as in the
 * seed's HardRuleEngine), on the same 17 standard-JSON-Logic rules and the same synthetic records. Both sides
 * build the same violation list, and the bench checks they agree before timing anything. The interpreted mode
 * of json-logic-engine (`run`) is shown for context. Records: RULES_BENCH_RECORDS (default 10000), timed
 * passes: RULES_BENCH_ROUNDS (default 10, after 2 warm-up passes).
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
      violations.push({ ruleId: rule.id!, field: rule.field, message: `Rule could not be evaluated: ${String(error)}`, severity: 'error', value: data[rule.field] ?? null });
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
}

/**
 * The `matches` operator on a pattern that makes a backtracking engine take minutes (V8's RegExp explores every
 * way to split the letters); re2js answers in linear time. Printed, never asserted: timings belong here.
 */
function timeNestedQuantifierPattern(engine: ReturnType<typeof createRuleEngine>): void {
  const rule = engine.compile({ matches: [{ var: 'x' }, '^(\\w+\\s?)*$'] });
  for (const length of [30, 1_000, 100_000]) {
    const started = performance.now();
    const matched = rule({ x: 'a'.repeat(length) + '!' });
    console.log(`matches ^(\\w+\\s?)*$ on ${length} x "a" + "!": ${matched} in ${(performance.now() - started).toFixed(2)} ms`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
