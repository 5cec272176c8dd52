import { RE2JS } from 're2js';
import { z } from 'zod';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../../core/llm/untrusted-data.js';
import type { ChatMessage } from '../../core/llm/types.js';
import type { TraceScope } from '../../core/trace/store.js';
import type { AgentDefinition } from '../definitions/agent-definition.js';
import { jsonAnswer } from '../definitions/answer-schema.js';
import { agentId, type AgentRegistry } from '../definitions/registry.js';
import { UNTRACED } from '../loop/one-shot.js';
import { runDefinition } from '../loop/run-definition.js';
import type { LoopOutcome } from '../loop/run-loop.js';
import type { ReflexionRuleConfig, ReflexionRuleLogic, StageConfig } from './config.js';
import { getPath, isPresent } from './context-paths.js';

/**
 * Reflexion (seed 001 section 2.5): before a stage's data is kept or the stage completes, the configured rules look
 * at it. Rule-based checks are exact and cheap; prompt-based ones ask the model whether the data meets the stage's
 * bar (a vague population, an endpoint without a timepoint). What a failed check does is the rule's failureAction:
 * block keeps the stage where it is, warn tells the user, log only records it.
 */

/** A validator registered in code by name (`custom` rules): the message when the value fails, else undefined. */
export type CustomValidator = (value: unknown, stageData: Record<string, unknown>) => string | undefined;

export interface ReflexionCheck {
  ruleId: string;
  ruleName: string;
  passed: boolean;
  severity: ReflexionRuleConfig['severity'];
  failureAction: ReflexionRuleConfig['failureAction'];
  message?: string;
  suggestion?: string;
}

export interface ReflexionResult {
  /** No failed check that blocks or warns (a failed log-only check does not count). */
  passed: boolean;
  checks: ReflexionCheck[];
  /** The messages of failed block and warn checks: what the user is told. */
  issues: string[];
  suggestions: string[];
  blockTransition: boolean;
}

interface ReflectInput {
  rules: readonly ReflexionRuleConfig[];
  timing: ReflexionRuleConfig['triggerTiming'];
  stage: StageConfig;
  /** The stage's context field (what `ruleLogic.field` paths read). */
  stageData: Record<string, unknown>;
}

interface ReflectDeps {
  /** Without it prompt-based rules are skipped with a note (rule-based checks still run). */
  llm?: LlmGateway;
  trace?: TraceScope;
  model?: string;
  validators?: Readonly<Record<string, CustomValidator>>;
  /** The registry the reflexion definition is resolved from (the server's): a run never falls back on a constant. */
  agents: Pick<AgentRegistry, 'get'>;
}

/**
 * Longest pattern a rule may use. Matching is linear-time (RE2), so this bounds what an admin's config makes us
 * compile rather than guarding against backtracking; the trial rules' `matches` operator uses the same figures
 * (src/trial/rules/matches-operator.ts, which this layer may not import).
 */
const MAX_RULE_PATTERN_LENGTH = 200;
/** Largest compiled program (RE2 instructions): `(a|aa){999}` is short and still huge; field formats take 10-30. */
const MAX_RULE_PROGRAM_SIZE = 1000;
/** Longest text a pattern is tested against; stage fields are sentences, and matching cost grows with length. */
const MAX_PATTERN_VALUE_LENGTH = 10_000;
/** Enough for a verdict with a few issues and suggestions. */
const VERDICT_MAX_TOKENS = 800;

/**
 * The verdict as the model writes it: `passed` decides, so it must be there as a boolean; issues and suggestions
 * are read leniently (a string where a list was asked for, blanks left out).
 */
const verdictSchema = z
  .looseObject({ passed: z.boolean(), issues: z.unknown().optional(), suggestions: z.unknown().optional() })
  .superRefine((verdict, ctx) => {
    // What the researcher is shown: a model running on (200 kB of "issues") is no verdict, not a wall of text.
    const shown = JSON.stringify([verdict.issues ?? [], verdict.suggestions ?? []]).length;
    if (shown > MAX_VERDICT_TEXT_CHARS) ctx.addIssue({ code: 'custom', path: ['issues'], message: `the issues and suggestions are ${shown} characters, more than a check can show (at most ${MAX_VERDICT_TEXT_CHARS})` });
  });

/** A few issues and suggestions of a sentence or two each. */
const MAX_VERDICT_TEXT_CHARS = 4000;

type ReflexionVerdict = z.infer<typeof verdictSchema>;

/** The compiled pattern, or why a rule's pattern cannot be used (also the config validator's check). */
export function checkRulePattern(pattern: unknown): { regex: RE2JS; problem?: undefined } | { regex?: undefined; problem: string } {
  if (typeof pattern !== 'string') return { problem: `the pattern must be a string, got ${JSON.stringify(pattern) ?? typeof pattern}` };
  if (pattern.length > MAX_RULE_PATTERN_LENGTH) return { problem: `the pattern is ${pattern.length} characters, over the ${MAX_RULE_PATTERN_LENGTH}-character limit; simplify it` };
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    return { problem: `the pattern ${JSON.stringify(pattern)} cannot be compiled by the linear-time matcher (RE2: no lookaround, no backreferences): ${errorMessage(error)}` };
  }
  const size = regex.programSize();
  if (size > MAX_RULE_PROGRAM_SIZE) {
    return { problem: `the pattern ${JSON.stringify(pattern)} compiles to ${size} instructions, over the ${MAX_RULE_PROGRAM_SIZE}-instruction limit; use smaller repetition counts` };
  }
  return { regex };
}

export async function reflect(input: ReflectInput, deps: ReflectDeps): Promise<ReflexionResult> {
  const rules = input.rules
    .filter((rule) => rule.triggerTiming === input.timing && (rule.triggerStageId === undefined || rule.triggerStageId === input.stage.stageId))
    // Array.prototype.sort is stable: rules of equal priority keep their configured order.
    .sort((a, b) => (a.priority ?? 100) - (b.priority ?? 100));
  const checks: ReflexionCheck[] = [];
  for (const rule of rules) checks.push(await checkRule(rule, input, deps));
  const shown = checks.filter((check) => !check.passed && check.failureAction !== 'log');
  return {
    passed: shown.length === 0,
    checks,
    issues: shown.map((check) => check.message ?? check.ruleName),
    suggestions: shown.flatMap((check) => (check.suggestion ? [check.suggestion] : [])),
    blockTransition: shown.some((check) => check.failureAction === 'block'),
  };
}

async function checkRule(rule: ReflexionRuleConfig, input: ReflectInput, deps: ReflectDeps): Promise<ReflexionCheck> {
  const base = { ruleId: rule.ruleId, ruleName: rule.ruleName, severity: rule.severity, failureAction: rule.failureAction };
  if (rule.ruleType === 'rule_based' || rule.ruleType === 'hybrid') {
    if (!rule.ruleLogic) return { ...base, passed: false, message: `${rule.message} (rule ${rule.ruleId} has no ruleLogic; ${rule.ruleType} rules need one)` };
    const detail = ruleLogicProblem(rule.ruleLogic, input.stageData, deps.validators ?? {});
    if (detail !== undefined) return { ...base, passed: false, message: detail ? `${rule.message} (${detail})` : rule.message };
    if (rule.ruleType === 'rule_based') return { ...base, passed: true };
  }
  return askModel(rule, base, input, deps);
}

/** '' when the rule fails with nothing to add to its message, a detail when there is one, undefined when it passes. */
function ruleLogicProblem(logic: ReflexionRuleLogic, stageData: Record<string, unknown>, validators: Readonly<Record<string, CustomValidator>>): string | undefined {
  const value = getPath(stageData, logic.field);
  switch (logic.condition) {
    case 'required':
      return isPresent(value) ? undefined : '';
    case 'min_length':
    case 'max_length': {
      // Absent is the `required` rule's business; a length rule judges what is there.
      if (!isPresent(value)) return undefined;
      const length = lengthOf(value);
      if (length === undefined) return `${logic.field} is ${typeof value}, which has no length`;
      const limit = Number(logic.value);
      if (!Number.isInteger(limit)) return `the rule's value ${JSON.stringify(logic.value)} is not a whole number`;
      const isOk = logic.condition === 'min_length' ? length >= limit : length <= limit;
      return isOk ? undefined : '';
    }
    case 'pattern': {
      if (!isPresent(value)) return undefined;
      const checked = checkRulePattern(logic.value);
      if (!checked.regex) return checked.problem;
      const texts = Array.isArray(value) ? value : [value];
      for (const text of texts) {
        if (typeof text !== 'string' && typeof text !== 'number') return `${logic.field} holds ${typeof text}, which a pattern cannot test`;
        const string = String(text);
        if (string.length > MAX_PATTERN_VALUE_LENGTH) return `${logic.field} is ${string.length} characters, over the ${MAX_PATTERN_VALUE_LENGTH} a pattern tests`;
        if (!checked.regex.test(string)) return '';
      }
      return undefined;
    }
    case 'custom': {
      const validator = logic.customValidator ? validators[logic.customValidator] : undefined;
      if (!validator) return `no validator named "${logic.customValidator ?? ''}" is registered; the rule cannot be checked`;
      try {
        return validator(value, stageData);
      } catch (error) {
        return `validator "${logic.customValidator}" failed: ${errorMessage(error)}`;
      }
    }
  }
}

/** Characters (code points, so a Chinese character counts one) of text or a number, items of a list. */
function lengthOf(value: unknown): number | undefined {
  if (typeof value === 'string') return [...value.trim()].length;
  if (typeof value === 'number') return String(value).length;
  if (Array.isArray(value)) return value.length;
  return undefined;
}

/**
 * The model's verdict on the stage data. A failed call or an unusable answer passes the check with a log-level
 * note: a model outage must not stop a researcher from finishing a stage, and the rule-based checks (the ones that
 * guard required content) still hold without it. The failed call itself is in the trace (the loop's llm span).
 */
async function askModel(rule: ReflexionRuleConfig, base: Omit<ReflexionCheck, 'passed'>, input: ReflectInput, deps: ReflectDeps): Promise<ReflexionCheck> {
  const note = (why: string): ReflexionCheck => ({ ...base, severity: 'info', failureAction: 'log', passed: true, message: `Not checked by the model: ${why}` });
  if (!deps.llm) return note('no model is available to this check');
  let outcome: LoopOutcome<ReflexionVerdict>;
  try {
    outcome = await runDefinition(deps.agents.get(REFLEXION_AGENT), { llm: deps.llm, trace: deps.trace ?? UNTRACED, modelName: deps.model, input: { rule, stage: input.stage, stageData: input.stageData } });
  } catch (error) {
    if (ClinAgentError.isInstance(error) && error.code === 'CANCELLED') throw error;
    return note(`the model call failed (${ClinAgentError.isInstance(error) ? error.code : errorMessage(error)})`);
  }
  if (outcome.kind !== 'final') {
    const last = outcome.kind === 'stopped' ? outcome.lastFailure : undefined;
    return note(`the model's answer was not a verdict (${last?.kind === 'answer' ? last.problems.join('; ') : outcome.kind === 'stopped' ? outcome.reason : 'no answer'})`);
  }
  const verdict = outcome.value;
  const issues = strings(verdict.issues);
  const suggestions = strings(verdict.suggestions);
  if (verdict.passed) return { ...base, passed: true };
  return {
    ...base,
    passed: false,
    message: issues.length ? `${rule.message}: ${issues.join('; ')}` : rule.message,
    ...(suggestions.length ? { suggestion: suggestions.join('; ') } : {}),
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.trim() !== '').map((item) => item.trim()) : [];
}

const SYSTEM = [
  'You review the data a clinical research protocol assistant has collected for one stage of a study protocol, and say whether it meets the bar given.',
  'Answer with one JSON object only: {"passed": true|false, "issues": ["..."], "suggestions": ["..."]}, issues and suggestions in the language of the data.',
  DATA_NOT_INSTRUCTIONS,
].join('\n');

const STAGE_DATA_LABEL = 'stage_data';

/**
 * The seed's buildReflexionPrompt (section 3.3): the rule's own promptTemplate with {{stageName}} and {{stageData}}
 * (or {{stageData.some.path}}) filled in, else a default asking for the stage's completion criteria. Stage data is
 * the user's own words, so it always goes in as a declared data block; a template that does not place it gets it
 * appended, since a verdict on data the model never saw is worthless.
 */
export function buildReflexionPrompt(rule: ReflexionRuleConfig, stage: StageConfig, stageData: Record<string, unknown>): string {
  const format = 'Reply with JSON: {"passed": true|false, "issues": ["problem 1", "problem 2"], "suggestions": ["suggestion 1", "suggestion 2"]}';
  if (rule.promptTemplate) {
    let placedData = false;
    const filled = rule.promptTemplate.replace(/\{\{\s*(stageName|stageData(?:\.[\w.]+)?)\s*\}\}/g, (_, name: string) => {
      if (name === 'stageName') return stage.stageName;
      placedData = true;
      return dataBlock(STAGE_DATA_LABEL, name === 'stageData' ? stageData : (getPath(stageData, name.slice('stageData.'.length)) ?? null));
    });
    return [filled, placedData ? '' : `\nThe ${stage.stageName} data:\n${dataBlock(STAGE_DATA_LABEL, stageData)}`, `\n${format}`].filter(Boolean).join('\n');
  }
  return [
    `Check the quality of the data collected in the ${stage.stageName} stage.`,
    `\nThe data:\n${dataBlock(STAGE_DATA_LABEL, stageData)}`,
    `\nCompletion criteria:\n${stage.completionCriteria || 'none given: judge whether the data is specific and complete enough for a study protocol'}`,
    `\nWhat this check looks for: ${rule.ruleName}. ${rule.message}`,
    `\n${format}`,
  ].join('\n');
}

interface ReflexionInput {
  rule: ReflexionRuleConfig;
  stage: StageConfig;
  stageData: Record<string, unknown>;
}

function reflexionMessages(input: ReflexionInput): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: buildReflexionPrompt(input.rule, input.stage, input.stageData) },
  ];
}

/**
 * A prompt-based reflexion rule's check (seed 001 section 3.3): one round, a JSON verdict. An unusable answer is
 * not asked again: the check passes with a note (askModel), so a model outage never blocks a researcher.
 */
/** Its id in the registry, typed: `agents.get(REFLEXION_AGENT)`. */
export const REFLEXION_AGENT = agentId<ReflexionInput, ReflexionVerdict>('staged_reflexion');

export const REFLEXION_DEFINITION: AgentDefinition<ReflexionInput, ReflexionVerdict> = {
  id: REFLEXION_AGENT,
  name: 'Stage data review (reflexion)',
  description: "Reviews the data a staged agent collected for one stage against a rule's bar, with a JSON verdict.",
  sourceFile: 'builtin:src/runtime/staged/reflexion.ts',
  instructions: reflexionMessages,
  tools: [],
  decision: { mode: 'native' },
  output: { name: 'reflexion_verdict' },
  // Only that the answer is an object: the zod schema says what is missing in words the model was told.
  answer: jsonAnswer(verdictSchema, { name: 'reflexion_verdict', parserSchema: { type: 'object' }, missingFields: 'fill' }),
  stop: { maxRounds: 1 },
  history: { strategy: 'none' },
  model: { temperature: 0, jsonMode: true, maxTokens: VERDICT_MAX_TOKENS },
  engine: { type: 'builtin' },
};
