import { z } from 'zod';
import { formatIssues } from '../../core/errors.js';
import type { JsonSchema, OutputType } from '../../core/structured/output-types.js';
import { parseStructuredOutput, type ParsedAs } from '../../core/structured/parse.js';
import { unshowableAnswer } from '../loop/correction.js';
import { decisionAnswer } from '../loop/decision-text.js';
import type { DecisionSpec } from './agent-definition.js';

/**
 * What a valid answer of an agent is, declared on its definition (openai-agents-js puts `outputType` on the
 * `Agent`): the loop reads every final answer through it and sends the correction round itself, so a definition
 * means the same thing whoever runs it. Agents in code give a zod schema (refinements included); a YAML scenario's
 * declared output is JSON Schema. Problems are `path: message` lines, the form a model can fix.
 */

/** One final answer: the model's text and, in JSON decision mode, the decision the shared parser read. */
export interface AnswerText {
  content: string;
  decision?: { action: string; data: Record<string, unknown> };
}

/** `truncated`: refused because it was cut off (JSON that ends open), so a stop can say so. `parsedAs`: how JSON parsed. */
export type AnswerCheck<O> = { ok: true; value: O; parsedAs?: ParsedAs } | { ok: false; problems: string[]; truncated?: boolean; parsedAs?: ParsedAs };

/** Checks that need the run's input (a router's intents must name a skill it was offered): problems, one line each. */
export type AnswerRefinement<O, I> = (value: O, input: I | undefined) => string[];

export interface AnswerSchema<O, I = unknown> {
  /** What the schema is applied to: the text as written, the JSON object in it, or the final JSON decision. */
  format: 'text' | 'json' | 'decision';
  /** The schema as GET /api/agents shows it (JSON Schema; derived from the zod schema for agents in code). */
  jsonSchema: JsonSchema;
  /** The value of an acceptable answer, or the problems to send back. */
  read(answer: AnswerText, input: I | undefined): AnswerCheck<O>;
}

/** JSON Schema of a zod schema as the model and the shared parser read it: the input side, what cannot be shown left open. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

function refined<O, I>(value: O, input: I | undefined, check: AnswerRefinement<O, I> | undefined, parsedAs?: ParsedAs): AnswerCheck<O> {
  const problems = check ? check(value, input) : [];
  if (problems.length) return { ok: false, problems };
  return parsedAs ? { ok: true, value, parsedAs } : { ok: true, value };
}

/** An answer in prose: the zod schema reads the text (not empty, not longer than can be shown, trimmed). */
export function textAnswer<O, I = unknown>(schema: z.ZodType<O, string>, check?: AnswerRefinement<O, I>): AnswerSchema<O, I> {
  return {
    format: 'text',
    jsonSchema: jsonSchemaOf(schema),
    read({ content }, input) {
      const parsed = schema.safeParse(content);
      return parsed.success ? refined(parsed.data, input, check) : { ok: false, problems: formatIssues(parsed.error.issues) };
    },
  };
}

export interface JsonAnswerOptions<Z, O, I> {
  /** Names the schema in parse errors and traces. */
  name: string;
  /**
   * What the tolerant parser reads the object against, when looser than `schema` (only the top-level fields): the
   * zod messages of `schema` then name what is wrong in words the model was told. The derived schema by default.
   */
  parserSchema?: JsonSchema;
  /**
   * A declared field the answer leaves out: a problem (`require`, the default: a verdict's `passed` filled in as
   * false would be a verdict the model never gave), or filled with an empty value and kept (`fill`).
   */
  missingFields?: 'require' | 'fill';
  /** Checks that need the run's input, after `schema`. */
  check?: AnswerRefinement<Z, I>;
  /** Shapes the checked value for the agent's caller, with the run's input (a single intent is about the whole message). */
  map?: (value: Z, input: I | undefined) => O;
}

/**
 * A JSON answer: the shared tolerant parser reads the object (repairing what it can, refusing what was cut off)
 * against the JSON Schema derived from `schema`, then `schema` gives the typed value. `parsedAs` says how it parsed.
 */
export function jsonAnswer<Z, O = Z, I = unknown>(schema: z.ZodType<Z>, options: JsonAnswerOptions<Z, O, I>): AnswerSchema<O, I> {
  const jsonSchema = jsonSchemaOf(schema);
  const output: OutputType = { name: options.name, schema: options.parserSchema ?? jsonSchema };
  const map = options.map ?? ((value: Z) => value as unknown as O);
  return {
    format: 'json',
    jsonSchema,
    read({ content }, input) {
      const parsed = parseStructuredOutput(content, output);
      const { parsedAs } = parsed;
      if (!parsed.success) return { ok: false, problems: [`(root): ${parsed.error}`], parsedAs, ...(parsed.truncated ? { truncated: true } : {}) };
      const problems = options.missingFields === 'fill' ? wrongTypes(parsed.warnings) : parsed.warnings.map(asRequired);
      if (problems.length) return { ok: false, problems, parsedAs };
      // The parser and zod read the same schema; zod also gives the typed value, and guards against the two disagreeing.
      const typed = schema.safeParse(parsed.data);
      if (!typed.success) return { ok: false, problems: formatIssues(typed.error.issues), parsedAs };
      const refusals = options.check ? options.check(typed.data, input) : [];
      if (refusals.length) return { ok: false, problems: refusals, parsedAs };
      return { ok: true, value: map(typed.data, input), parsedAs: parsed.parsedAs };
    },
  };
}

/** The final decision of a JSON decision agent (the action that ended the turn, with its fields), checked by `schema`. */
export function decisionAnswerSchema<O, I = unknown>(schema: z.ZodType<O>, check?: AnswerRefinement<O, I>): AnswerSchema<O, I> {
  return {
    format: 'decision',
    jsonSchema: jsonSchemaOf(schema),
    read({ decision }, input) {
      if (!decision) return { ok: false, problems: ['(root): the answer is not a JSON decision; answer with one JSON object with an "action"'] };
      const typed = schema.safeParse(decision.data);
      return typed.success ? refined(typed.data, input, check) : { ok: false, problems: formatIssues(typed.error.issues) };
    },
  };
}

/**
 * The answer of a definition that declares only its output type (a YAML scenario, a stage of a staged agent): valid
 * for that output type, the declared JSON Schema when it has one (a field left out is filled and kept, one of the
 * wrong type is a problem), and something a person can be shown. The value is what the person reads: a JSON
 * decision's text, or the model's text as written.
 */
export function outputAnswer(output: OutputType, decision: DecisionSpec): AnswerSchema<string> {
  const format = output.schema ? 'json' : decision.mode === 'json' ? 'decision' : 'text';
  const jsonSchema: JsonSchema = output.schema ?? (decision.mode === 'json' ? { type: 'object', properties: { action: { type: 'string', enum: [...decision.actions] } }, required: ['action'] } : { type: 'string', minLength: 1 });
  return {
    format,
    jsonSchema,
    read({ content, decision: read }) {
      const parsed = parseStructuredOutput(content, output);
      if (!parsed.success) return { ok: false, problems: [`(root): ${parsed.error}`], ...(parsed.truncated ? { truncated: true } : {}) };
      const problems = wrongTypes(parsed.warnings);
      if (problems.length) return { ok: false, problems };
      const answer = read ? decisionAnswer(content, read.data) : content;
      const unshowable = unshowableAnswer(content) ?? unshowableAnswer(answer);
      return unshowable ? { ok: false, problems: [unshowable] } : { ok: true, value: answer, parsedAs: parsed.parsedAs };
    },
  };
}

/** The parser's note for a declared field the answer left out, which it filled with a default. */
const MISSING_FIELD = /^([^:]+): missing, filled with /;

/** The warnings that say a field has the wrong type ("summary": 42), not those of a field left out and filled. */
function wrongTypes(warnings: readonly string[]): string[] {
  const filled = new Set(warnings.flatMap((warning) => MISSING_FIELD.exec(warning)?.slice(1, 2) ?? []));
  return warnings.filter((warning) => !MISSING_FIELD.test(warning) && !filled.has(warning.slice(0, warning.indexOf(':'))));
}

/** "passed: missing, filled with false" tells the model about our parser; it needs to hear the field is required. */
function asRequired(warning: string): string {
  return warning.replace(/: missing, filled with .*$/s, ': missing; this field is required');
}
