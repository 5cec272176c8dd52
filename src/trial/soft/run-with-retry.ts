import { z } from 'zod';
import { ClinAgentError, formatIssues } from '../../core/errors.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { ToolCallResult, ToolRegistry } from '../../core/tools/registry.js';
import type { TraceScope } from '../../core/trace/store.js';
import { failedToolContent, toolResultContent } from './prompt.js';
import { runDefinition } from '../../runtime/loop/index.js';
import type { AgentRegistry } from '../../runtime/definitions/index.js';
import { SOFT_RULE_AGENT, SOFT_RULE_DEFINITION } from './definition.js';

export interface SoftRuleResult {
  passed: boolean;
  reason: string;
  /** 0..1; 0 on the needs-human-review fallback. */
  confidence: number;
  evidence: string;
  /** Model responses counted against maxRetries (unusable answers, rounds with a failed tool call), plus the accepted answer. */
  attempts: number;
  /** How the shared parser read the accepted answer (exact, extracted, repaired); `failed` on the fallback. */
  parsedAs: string;
  /** Every tool call the model asked for, refused and failed ones included, in order. */
  toolCalls: ToolCallResult[];
}

export interface SoftRuleDeps {
  llm: LlmGateway;
  tools: ToolRegistry;
  trace?: TraceScope;
  /** The registry the judge's definition is resolved from (the server's). */
  agents: Pick<AgentRegistry, 'get'>;
}

export interface SoftRuleOptions {
  /** Unusable responses allowed before giving up; 3 as in seed 000 section 3.1. */
  maxRetries?: number;
  /** Registry tools this rule may call; none by default, so a rule reads only its record unless it says otherwise. */
  tools?: string[];
  /** Successful tool rounds allowed on top of maxRetries; after them tools are withheld and the model must answer. */
  maxToolRounds?: number;
}

/** The fallback verdict: not passed, nothing claimed. The returned reason adds a short why after the prefix. */
export const NEEDS_HUMAN_REVIEW = Object.freeze({ passed: false, reason: 'needs human review', confidence: 0, evidence: '', parsedAs: 'failed' } as const);

/** True for a fallback result, so an SOP step can route it to review instead of opening a data query. */
export function isNeedsHumanReview(result: Pick<SoftRuleResult, 'passed' | 'reason'>): boolean {
  return !result.passed && result.reason.startsWith(NEEDS_HUMAN_REVIEW.reason);
}

const optionsSchema = z.object({
  instruction: z.string().trim().min(1, 'the instruction is empty; say what the model should check'),
  // The same bounds as max_retries in a skill's soft_instruction node (trial/sop/skill-schema.ts).
  maxRetries: z.number().int().min(1).max(10).default(3),
  tools: z.array(z.string().min(1)).default([]),
  // The same default and cap as a scenario's max_tool_rounds: enough to look up, compute and check once more.
  maxToolRounds: z.number().int().min(0).max(20).default(4),
});

/**
 * SoftRuleEngine.runWithRetry (seed 000 section 3.2): ask the model for a verdict on one record, letting it
 * call the allowed tools through the shared registry and correct itself.
 *
 * - A failed tool call (bad arguments, a throwing tool, a tool outside `options.tools`) goes back as the tool
 *   message with the error and a request to fix the arguments, and counts as one attempt.
 * - An answer the shared parser cannot read, or with a field missing or of the wrong type, goes back as
 *   `path: message` lines asking for corrected JSON only, and counts as one attempt.
 * - After `maxRetries` attempts the result is NEEDS_HUMAN_REVIEW with a short why.
 * Every model call uses one attempt or one tool round, so there are at most maxRetries + maxToolRounds calls.
 *
 * LLM errors are not attempts: every ClinAgentError from the gateway (LLM_RATE_LIMITED, LLM_TIMEOUT,
 * LLM_UNAVAILABLE, LLM_BAD_RESPONSE, LLM_NOT_CONFIGURED, ...) propagates. The openai client under the gateway
 * has already retried 429/5xx/timeouts, so retrying here would stack a second policy; an outage (rate limited,
 * timed out, unavailable) is waited out by the step driver with a bounded budget per run, after which the
 * record is reported not checked, and the other codes are recorded by the SOP step as on_error. Turning them
 * into "needs human review" would file an outage as a finding about the record.
 * Bad options and unknown tool names throw VALIDATION_FAILED / NOT_FOUND before any model call.
 */
export async function runWithRetry(deps: SoftRuleDeps, instruction: string, context: unknown, options: SoftRuleOptions = {}): Promise<SoftRuleResult> {
  const checked = optionsSchema.safeParse({ instruction, ...options });
  if (!checked.success) {
    throw new ClinAgentError('VALIDATION_FAILED', `The soft rule cannot run:\n${formatIssues(checked.error.issues).join('\n')}`, { issues: formatIssues(checked.error.issues) });
  }
  const settings = { ...checked.data, tools: [...new Set(checked.data.tools)] };
  // Unknown tool names fail here, before any model call, naming the tools that exist.
  deps.tools.specs(settings.tools);
  const run = () => judge(deps, settings, context);
  if (!deps.trace) return run();
  return deps.trace.span(
    'step',
    'soft_rule',
    { instruction: settings.instruction, tools: settings.tools, maxRetries: settings.maxRetries, maxToolRounds: settings.maxToolRounds },
    run,
    (result) => ({
      output: {
        passed: result.passed,
        reason: result.reason,
        confidence: result.confidence,
        attempts: result.attempts,
        parsedAs: result.parsedAs,
        toolCalls: result.toolCalls.map((call) => ({ toolName: call.toolName, success: call.success })),
      },
      // The call returns normally either way; the span shows a fallback as failed so it stands out in the trace.
      status: isNeedsHumanReview(result) ? 'failed' : 'success',
      error: isNeedsHumanReview(result) ? result.reason : undefined,
    }),
  );
}

interface Settings {
  instruction: string;
  maxRetries: number;
  tools: string[];
  maxToolRounds: number;
}

async function judge(deps: SoftRuleDeps, settings: Settings, context: unknown): Promise<SoftRuleResult> {
  // The rule's own tools and limits on the judge's definition.
  const judge = deps.agents.get(SOFT_RULE_AGENT);
  const definition = { ...judge, tools: settings.tools, stop: { ...judge.stop, attempts: settings.maxRetries, maxToolRounds: settings.maxToolRounds } };
  const outcome = await runDefinition(definition, {
    llm: deps.llm,
    trace: deps.trace ?? UNTRACED,
    registry: deps.tools,
    input: { instruction: settings.instruction, context, tools: settings.tools },
    observations: { result: (o) => toolResultContent(o.result), failure: (call, error) => failedToolContent(call.name, error) },
  });
  const attempts = outcome.progress.corrections + outcome.progress.failedToolRounds;
  if (outcome.kind === 'final') return { ...outcome.value, attempts: attempts + 1, parsedAs: outcome.parsedAs ?? 'exact', toolCalls: outcome.toolCalls };
  const last = outcome.kind === 'stopped' ? outcome.lastFailure : undefined;
  const lastProblem = !last ? '' : last.kind === 'answer' ? `${last.truncated ? 'answer cut off' : 'unusable answer'}: ${last.problems.join('; ')}` : `${last.kind === 'tool' ? 'tool' : 'model'} call failed: ${last.error}`;
  return {
    ...NEEDS_HUMAN_REVIEW,
    reason: `${NEEDS_HUMAN_REVIEW.reason}: no usable verdict after ${attempts} attempts (last: ${shorten(lastProblem, 200)})`,
    attempts,
    toolCalls: outcome.toolCalls,
  };
}

/** Soft rules may run without a trace (a library caller); the loop's spans then go nowhere. */
const UNTRACED: TraceScope = { traceId: '', span: (_kind, _name, _input, fn) => fn() };

function shorten(text: string, maxChars: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > maxChars ? `${oneLine.slice(0, maxChars - 1)}…` : oneLine;
}
