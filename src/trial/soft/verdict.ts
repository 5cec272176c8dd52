import { z } from 'zod';
import { jsonAnswer } from '../../runtime/definitions/answer-schema.js';
import type { OutputType } from '../../core/structured/output-types.js';
import type { ParsedAs } from '../../core/structured/parse.js';

/** A reason is one or two sentences; far longer is a model that lost its way, sent back to say it shorter. */
const MAX_REASON_CHARS = 2000;
const MAX_EVIDENCE_CHARS = 4000;

/**
 * The verdict a soft rule asks the model for (seed 000 section 3.2). Defined once in zod: the JSON Schema
 * the shared parser checks against and the prompt shows is derived from it, so the two cannot drift.
 * `confidence` has no minimum or maximum on purpose: an out-of-range value is clamped, not sent back for a
 * retry, because 1.2 still says "very sure" and a retry would cost a model call to learn nothing.
 */
export const softRuleVerdictSchema = z.object({
  passed: z.boolean().describe('true when the record satisfies the instruction'),
  // Bounded: a reason becomes a query a site reads, and a model that ignores max_tokens can write 200 kB of it.
  reason: z.string().max(MAX_REASON_CHARS).describe('why, in one or two sentences'),
  confidence: z.number().describe('how sure, from 0 to 1'),
  evidence: z.string().max(MAX_EVIDENCE_CHARS).describe('the field values the verdict rests on, quoted from the record or a tool result'),
});

export type SoftRuleVerdict = z.infer<typeof softRuleVerdictSchema>;

function verdictJsonSchema(): Record<string, unknown> {
  // The input side: a plain object schema without `additionalProperties: false`, so an extra key the model
  // adds (a "notes" field) is ignored rather than sent back as an error.
  const schema = z.toJSONSchema(softRuleVerdictSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

export const SOFT_RULE_VERDICT: OutputType = { name: 'soft_rule_verdict', schema: verdictJsonSchema(), answerField: 'reason' };

export type VerdictCheck =
  | { ok: true; verdict: SoftRuleVerdict; parsedAs: ParsedAs }
  | { ok: false; problems: string[]; parsedAs: ParsedAs; truncated?: boolean };

/**
 * What a valid verdict is, the soft-rule judge's answer schema: read by the shared tolerant parser, accepted only
 * when every field is present with its type. The parser fills a missing field with an empty value; here that is a
 * problem, since a `passed` filled in as `false` would be a verdict the model never gave. A verdict cut off mid-way
 * ("passed": true, "reason": "Consist) is never completed by guessing. Problems are `path: message` lines.
 */
export const SOFT_RULE_ANSWER = jsonAnswer(softRuleVerdictSchema, {
  name: SOFT_RULE_VERDICT.name,
  map: (verdict): SoftRuleVerdict => ({ ...verdict, confidence: Math.min(1, Math.max(0, verdict.confidence)) }),
});

/** One answer read as the judge's definition reads it (the loop does this for every final answer). */
export function checkVerdict(rawOutput: string): VerdictCheck {
  const check = SOFT_RULE_ANSWER.read({ content: rawOutput }, undefined);
  const parsedAs = check.parsedAs ?? 'failed';
  if (check.ok) return { ok: true, verdict: check.value, parsedAs };
  return { ok: false, problems: check.problems, parsedAs, ...(check.truncated ? { truncated: true } : {}) };
}
