import { Ajv, type ValidateFunction } from 'ajv';
import { jsonrepair } from 'jsonrepair';
import { errorMessage } from '../errors.js';
import { resolveOutputType, type JsonSchema, type OutputType } from './output-types.js';

/** How the JSON was obtained, so traces show when the model needed repairs. */
export type ParsedAs = 'text' | 'exact' | 'extracted' | 'repaired' | 'failed';

export interface ParseResult {
  success: boolean;
  data: Record<string, unknown>;
  parsedAs: ParsedAs;
  /** Why parsing failed; empty on success. */
  error: string;
  /** Fields filled with defaults and schema mismatches: light validation, never a failure. */
  warnings: string[];
  rawOutput: string;
  /**
   * The JSON ends open (inside a string, object or array): the answer was cut off, usually by the token limit.
   * Repair could close it, but the closed object is a guess at a shorter answer than the model meant, so it is
   * a failure: the caller asks again or gives up, never keeps it as the answer.
   */
  truncated: boolean;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new WeakMap<JsonSchema, ValidateFunction>();
/**
 * Callers that build their schema on each call (the loop's decision schema, every round) would otherwise make
 * Ajv compile it again each time (about 2 ms) and keep every copy in its own cache: equal schemas share one
 * validator by their JSON text. Bounded, oldest first out, since schemas come from scenarios and code, not users.
 */
const validatorsByText = new Map<string, ValidateFunction>();
const MAX_VALIDATORS_BY_TEXT = 256;

function compiledValidator(schema: JsonSchema): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = validatorsByText.get(text);
  if (!validate) {
    validate = ajv.compile(schema);
    if (validatorsByText.size >= MAX_VALIDATORS_BY_TEXT) validatorsByText.delete(validatorsByText.keys().next().value!);
    validatorsByText.set(text, validate);
  }
  return validate;
}

/**
 * The one tolerant structured-output parser. Order: the whole text as JSON, then JSON inside a markdown
 * fence or prose, then the same candidates through `jsonrepair`. It never throws: a failure is reported
 * with the raw output kept, so a bad answer never crashes a run.
 */
export function parseStructuredOutput(rawOutput: string, outputTypeSpec?: string | OutputType): ParseResult {
  let outputType: OutputType;
  try {
    outputType = resolveOutputType(outputTypeSpec);
  } catch (error) {
    return { success: false, data: {}, parsedAs: 'failed', error: errorMessage(error), warnings: [], rawOutput, truncated: false };
  }
  if (!outputType.schema) {
    return { success: true, data: {}, parsedAs: 'text', error: '', warnings: [], rawOutput, truncated: false };
  }
  const found = findJsonObject(rawOutput);
  if (found?.truncated) {
    return {
      success: false,
      data: {},
      parsedAs: 'failed',
      error: `The JSON in the model output is cut off before it closes (expected output type "${outputType.name}"): the answer was truncated, usually by the output token limit. A shorter complete answer is needed. The raw output is kept.`,
      warnings: [],
      rawOutput,
      truncated: true,
    };
  }
  if (!found) {
    return {
      success: false,
      data: {},
      parsedAs: 'failed',
      error: `No JSON object found in the model output (expected output type "${outputType.name}"). The raw output is kept.`,
      warnings: [],
      rawOutput,
      truncated: false,
    };
  }
  // An object with none of the expected fields (often `{}` repaired from a stray brace) is not an answer
  // of this type; filling every field with empties would pass it off as one.
  const expected = Object.keys((outputType.schema.properties ?? {}) as Record<string, unknown>);
  if (expected.length && !expected.some((key) => key in found.value)) {
    return {
      success: false,
      data: {},
      parsedAs: 'failed',
      error: `The JSON in the model output has none of the fields of output type "${outputType.name}" (${expected.join(', ')}). The raw output is kept.`,
      warnings: [],
      rawOutput,
      truncated: false,
    };
  }
  const warnings = fillAndCheck(found.value, outputType.schema);
  return { success: true, data: found.value, parsedAs: found.parsedAs, error: '', warnings, rawOutput, truncated: false };
}

function findJsonObject(raw: string): { value: Record<string, unknown>; parsedAs: ParsedAs; truncated?: boolean } | undefined {
  const text = raw.trim();
  const candidates: Array<{ text: string; parsedAs: ParsedAs }> = [{ text, parsedAs: 'exact' }];
  for (const match of text.matchAll(/```(?:json|JSON)?\s*\n?([\s\S]*?)```/g)) {
    if (match[1]?.trim()) candidates.push({ text: match[1].trim(), parsedAs: 'extracted' });
  }
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push({ text: text.slice(first, last + 1), parsedAs: 'extracted' });
  // An unterminated object (output cut off by max_tokens) has no closing brace; repair may complete it.
  if (first >= 0 && last < first) candidates.push({ text: text.slice(first), parsedAs: 'extracted' });

  for (const candidate of candidates) {
    const value = tryParse(candidate.text);
    if (isObject(value)) return { value, parsedAs: candidate.parsedAs };
  }
  for (const candidate of candidates) {
    if (!candidate.text.includes('{')) continue;
    const json = candidate.text.slice(candidate.text.indexOf('{'));
    try {
      const value = JSON.parse(jsonrepair(json));
      if (isObject(value)) return { value, parsedAs: 'repaired', truncated: endsOpen(json) };
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

/**
 * Whether JSON text stops inside a string, object or array. Only asked of text that needed repair: a complete
 * answer with a trailing comma or single quotes is closed, one cut off by the token limit is not. Single-quoted
 * strings are not tracked, so a brace inside one can mislead it; models that quote that way rarely nest braces there.
 */
function endsOpen(json: string): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (const char of json) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === '\\') escaped = true;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') depth--;
  }
  return inString || depth > 0;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Fills absent declared fields with their schema default (or an empty value of their type), then validates. */
function fillAndCheck(data: Record<string, unknown>, schema: JsonSchema): string[] {
  const warnings: string[] = [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [key, property] of Object.entries(properties)) {
    if (data[key] !== undefined || !isObject(property)) continue;
    data[key] = 'default' in property ? structuredClone(property.default) : emptyValueOf(property.type);
    warnings.push(`${key}: missing, filled with ${JSON.stringify(data[key])}`);
  }
  let validate = validators.get(schema);
  if (!validate) {
    try {
      validate = compiledValidator(schema);
    } catch (error) {
      // A scenario's own schema can be invalid JSON Schema; that must not crash the run that produced the
      // answer (the parser never throws), so the answer is kept unchecked and the reason shown.
      warnings.push(`(schema): cannot be checked, the output type's JSON Schema is invalid: ${errorMessage(error)}`);
      return warnings;
    }
    validators.set(schema, validate);
  }
  if (!validate(data)) {
    for (const issue of validate.errors ?? []) warnings.push(`${issue.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(root)'}: ${issue.message}`);
  }
  return warnings;
}

function emptyValueOf(type: unknown): unknown {
  switch (type) {
    case 'array':
      return [];
    case 'object':
      return {};
    case 'string':
      return '';
    case 'boolean':
      return false;
    default:
      return null;
  }
}
