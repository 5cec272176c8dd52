import { ClinAgentError } from '../../core/errors.js';
import { checkLogic, type LogicProblem } from './check-logic.js';
import { createRuleEngine, type CompiledLogic, type RuleEngine } from './rule-engine.js';
import { hardRuleSchema } from './rule-schema.js';
import { describeThrown, runRules, runRulesInSlices, type RunnableRule } from './run-rules.js';
import type { CompiledRules, HardRule } from './types.js';

interface CompileRulesOptions {
  /** Record fields a rule may read; when given, a variable naming any other field is a compile error. */
  knownFields?: string[];
  /** Share one engine between rule sets; by default each call creates its own. */
  engine?: RuleEngine;
}

interface RuleProblem {
  index: number;
  ruleId: string | undefined;
  path: string;
  message: string;
  kind: LogicProblem['kind'] | 'shape';
}

/**
 * Validates and compiles a rule set once; `run` then evaluates the compiled functions for every record.
 * Every problem in every rule is collected before throwing, so one round of fixes is enough.
 */
export function compileRules(rules: HardRule[], options: CompileRulesOptions = {}): CompiledRules {
  const engine = options.engine ?? createRuleEngine();
  const knownFields = options.knownFields ? new Set(options.knownFields) : undefined;
  if (!Array.isArray(rules)) {
    throw new ClinAgentError('VALIDATION_FAILED', `Hard rules must be an array of {field, logic, message, severity}; got ${typeof rules}.`, {});
  }

  const problems: RuleProblem[] = [];
  const runnable: RunnableRule[] = [];
  const seenIds = new Map<string, number>();
  rules.forEach((raw, index) => {
    const parsed = hardRuleSchema.safeParse(raw);
    const rawId = displayId(raw, index);
    const add = (path: string, message: string, kind: RuleProblem['kind']) => problems.push({ index, ruleId: rawId, path, message, kind });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) add(issue.path.length ? issue.path.map(String).join('.') : '(rule)', issue.message, 'shape');
    }
    const logic = (raw as { logic?: unknown } | null)?.logic;
    if (raw !== null && typeof raw === 'object' && logic !== undefined) {
      for (const problem of checkLogic(logic, engine, knownFields)) add(problem.path, problem.message, problem.kind);
    }
    if (!parsed.success) return;

    const rule = parsed.data;
    const id = rule.id ?? `${rule.field}#${index}`;
    const firstIndex = seenIds.get(id);
    if (firstIndex !== undefined) add('id', `duplicate rule id "${id}" (also rules[${firstIndex}]); violations must name one rule`, 'shape');
    else seenIds.set(id, index);
    if (knownFields && !knownFields.has(rule.field)) add('field', `unknown field "${rule.field}"`, 'variable');
    if (problems.some((problem) => problem.index === index)) return;

    let evaluate: CompiledLogic;
    try {
      evaluate = engine.compile(rule.logic);
    } catch (error) {
      add('logic', `cannot be compiled: ${describeThrown(error)}`, 'operator');
      return;
    }
    runnable.push({ rule: Object.freeze({ ...rule, id }), evaluate });
  });

  if (problems.length) throw compileError(problems, rules.length, engine, knownFields);
  return {
    rules: Object.freeze(runnable.map((r) => r.rule)),
    run: (data) => runRules(runnable, data),
    runInSlices: (data) => runRulesInSlices(runnable, data),
  };
}

function compileError(problems: RuleProblem[], total: number, engine: RuleEngine, knownFields?: ReadonlySet<string>): ClinAgentError {
  const badRules = new Set(problems.map((p) => p.index)).size;
  const lines = problems.map((p) => `rules[${p.index}]${p.ruleId ? ` (${p.ruleId})` : ''}: ${p.path}: ${p.message}`);
  const validOperators = engine.operatorNames;
  const validVariables = knownFields ? [...knownFields].sort() : undefined;
  const hints: string[] = [];
  if (problems.some((p) => p.kind === 'operator')) hints.push(`Valid operators: ${validOperators.join(', ')}.`);
  if (validVariables && problems.some((p) => p.kind === 'variable')) hints.push(`Valid variables: ${validVariables.join(', ')}.`);
  const isShapeProblem = problems.some((p) => p.kind === 'shape');
  const message = [
    `${badRules} of ${total} hard rules cannot be compiled; fix each rule at the named path:`,
    ...lines.map((line) => `  ${line}`),
    ...hints,
  ].join('\n');
  return new ClinAgentError(isShapeProblem ? 'VALIDATION_FAILED' : 'RULE_COMPILE_FAILED', message, {
    problems: problems.map(({ index, ruleId, path, message: problem }) => ({ index, ruleId, path, message: problem })),
    validOperators,
    ...(validVariables ? { validVariables } : {}),
  });
}

/** The id the rule has or would get, so an error line names the rule even when it is malformed. */
function displayId(raw: unknown, index: number): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const { id, field } = raw as { id?: unknown; field?: unknown };
  if (typeof id === 'string' && id !== '') return id;
  return typeof field === 'string' && field !== '' ? `${field}#${index}` : undefined;
}
