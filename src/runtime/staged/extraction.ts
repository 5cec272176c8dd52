import { parseStructuredOutput } from '../../core/structured/parse.js';
import type { JsonSchema } from '../../core/structured/output-types.js';
import { isPresent } from './context-paths.js';
import { groundingProblem, indexSources, type GroundingSources } from './grounding.js';

/**
 * A staged agent's reply ends with an `<extracted_data>` block: what the model read from the user's message, in
 * the shape of the stage's extraction schema. The user sees the reply without it; the context records only what
 * survives the checks here: declared keys, the right types, real values, each grounded in what the user said or
 * a tool computed (grounding.ts).
 */

/** The block's tags, as the system prompt shows them to the model. */
export const EXTRACTED_DATA_TAGS = { open: '<extracted_data>', close: '</extracted_data>' } as const;
const BLOCK = /<extracted_data>([\s\S]*?)<\/extracted_data>/gi;
const UNCLOSED = /<extracted_data>([\s\S]*)$/i;
/** A markdown fence the model put around the block, left empty once the block is gone. */
const EMPTY_FENCE = /```[A-Za-z]*\s*```/g;

interface SplitReply {
  /** What the user sees: the reply without the block, trimmed. */
  message: string;
  /** The block's inner text (the last block when the model wrote several); absent when there is none. */
  raw?: string;
}

export function splitExtractedData(reply: string): SplitReply {
  let raw: string | undefined;
  let message = reply.replace(BLOCK, (_, inner: string) => {
    raw = inner;
    return '';
  });
  // A reply cut off by max_tokens (or a model that forgot to close) leaves the block open to the end.
  const unclosed = UNCLOSED.exec(message);
  if (unclosed) {
    raw = unclosed[1];
    message = message.slice(0, unclosed.index);
  }
  message = message.replace(EMPTY_FENCE, '').trim();
  // A closing tag alone (the model closed a block it never opened) is markup, not text for the user.
  message = message.split(EXTRACTED_DATA_TAGS.close).join('').trim();
  return raw === undefined ? { message } : { message, raw };
}

export interface RejectedValue {
  /** Where in the stage's data, dotted (`total`, `perGroup.0`, `primary.name`). */
  path: string;
  value: unknown;
  reason: string;
}

export interface StageExtraction {
  data: Record<string, unknown>;
  rejected: RejectedValue[];
  /** Why the block could not be used at all, or schema problems not tied to one value. */
  problems: string[];
  /** How the parser read the block ('exact', 'repaired', ...); 'none' when there was no block. */
  parsedAs: string;
}

interface ExtractStageDataInput {
  reply: string;
  /** The stage's extraction schema (JSON Schema of an object); its `example` is documentation and is ignored. */
  schema: Record<string, unknown>;
  /** The user's messages of the conversation, this turn's tool results, the current context as JSON. */
  sources: string[];
}

const OUTPUT_NAME = 'extracted_data';

export function extractStageData(input: ExtractStageDataInput): StageExtraction {
  const { raw } = splitExtractedData(input.reply);
  const empty: StageExtraction = { data: {}, rejected: [], problems: [], parsedAs: 'none' };
  if (raw === undefined || raw.trim() === '') return empty;

  // First only find the object: a schema without properties makes the parser neither fill absent fields (a filled
  // `false` or default would be a value nobody said) nor refuse an object whose keys are all undeclared (those are
  // reported one by one below).
  const found = parseStructuredOutput(raw, { name: OUTPUT_NAME, schema: { type: 'object' } });
  if (!found.success) return { ...empty, parsedAs: found.parsedAs, problems: [`The <extracted_data> block cannot be used: ${found.error}`] };

  const schema = withoutExample(input.schema);
  const rejected: RejectedValue[] = [];
  let data = dropUndeclared(found.data, schema, '', rejected) as Record<string, unknown>;
  data = (pruneEmpty(data) as Record<string, unknown> | undefined) ?? {};
  const problems: string[] = [];
  if (Object.keys(data).length) data = dropWrongTypes(data, schema, rejected, problems);
  const sources = indexSources(input.sources);
  data = (pruneEmpty(dropUngrounded(data, schema, '', sources, rejected)) as Record<string, unknown> | undefined) ?? {};
  return { data, rejected, problems, parsedAs: found.parsedAs };
}

function withoutExample(schema: Record<string, unknown>): JsonSchema {
  const { example: _example, ...rest } = schema;
  return rest;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, key: string | number): string {
  return path ? `${path}.${key}` : String(key);
}

/** The schema of a property, or of an array's items; undefined when the schema says nothing. */
function propertySchema(schema: unknown, key: string): JsonSchema | undefined {
  if (!isObject(schema) || !isObject(schema.properties)) return undefined;
  const property = schema.properties[key];
  return isObject(property) ? property : undefined;
}

function itemSchema(schema: unknown): JsonSchema | undefined {
  return isObject(schema) && isObject(schema.items) ? schema.items : undefined;
}

/** Keys the schema does not declare are rejected, at every level whose schema lists its properties. */
function dropUndeclared(value: unknown, schema: JsonSchema | undefined, path: string, rejected: RejectedValue[]): unknown {
  if (Array.isArray(value)) return value.map((item, i) => dropUndeclared(item, itemSchema(schema), join(path, i), rejected));
  if (!isObject(value)) return value;
  const declares = isObject(schema) && isObject(schema.properties);
  const allowsOthers = isObject(schema) && (schema.additionalProperties === true || isObject(schema.additionalProperties));
  const kept: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const property = propertySchema(schema, key);
    if (declares && !property && !allowsOthers) {
      if (!isEmpty(pruneEmpty(item))) rejected.push({ path: join(path, key), value: item, reason: 'not a field of this stage' });
      continue;
    }
    kept[key] = dropUndeclared(item, property, join(path, key), rejected);
  }
  return kept;
}

/** "Not said" is not a value: null, blank text, [] and {} go, and so do objects and arrays left empty. */
function pruneEmpty(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(pruneEmpty).filter((item) => !isEmpty(item));
    return items.length ? items : undefined;
  }
  if (isObject(value)) {
    const entries = Object.entries(value)
      .map(([key, item]) => [key, pruneEmpty(item)] as const)
      .filter(([, item]) => !isEmpty(item));
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return isEmpty(value) ? undefined : value;
}

function isEmpty(value: unknown): boolean {
  return !isPresent(value);
}

/**
 * Validates with the shared parser against the stage's schema and rejects each value the schema complains about,
 * with its complaint. The data is given as exact JSON, so the parser only validates; fields it fills for absent
 * keys are not ours to keep, and their warnings name keys the data does not have.
 */
function dropWrongTypes(data: Record<string, unknown>, schema: JsonSchema, rejected: RejectedValue[], problems: string[]): Record<string, unknown> {
  const checked = parseStructuredOutput(JSON.stringify(data), { name: OUTPUT_NAME, schema });
  const kept = structuredClone(data);
  const removals: string[][] = [];
  for (const warning of checked.warnings) {
    const split = warning.indexOf(': ');
    const path = split < 0 ? '(root)' : warning.slice(0, split);
    const reason = split < 0 ? warning : warning.slice(split + 2);
    // Data comes a message at a time and merges into what the stage holds: a part of an object (the primary
    // endpoint's timepoint before its name) is the normal case, so `required` is the reflexion rules' business.
    if (reason.startsWith('must have required property')) continue;
    if (path === '(root)' || path === '(schema)') {
      problems.push(warning);
      continue;
    }
    const segments = path.split('.');
    if (!(segments[0]! in data)) continue;
    const value = valueAt(data, segments);
    if (value === undefined) continue;
    rejected.push({ path, value, reason });
    removals.push(segments);
  }
  // Deepest and last array items first, so removing one never shifts the index of another still to remove.
  removals.sort((a, b) => b.length - a.length || compareIndex(b.at(-1)!, a.at(-1)!));
  for (const segments of removals) removeAt(kept, segments);
  return kept;
}

function compareIndex(a: string, b: string): number {
  return Number(a) - Number(b) || a.localeCompare(b);
}

function valueAt(data: unknown, segments: string[]): unknown {
  let current = data;
  for (const segment of segments) {
    if (Array.isArray(current)) current = current[Number(segment)];
    else if (isObject(current)) current = current[segment];
    else return undefined;
  }
  return current;
}

function removeAt(data: unknown, segments: string[]): void {
  const parent = valueAt(data, segments.slice(0, -1));
  const last = segments.at(-1)!;
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (isObject(parent)) delete parent[last];
}

/** Walks to each leaf and keeps it only when it is grounded (grounding.ts); rejected leaves are removed. */
function dropUngrounded(value: unknown, schema: JsonSchema | undefined, path: string, sources: GroundingSources, rejected: RejectedValue[], key?: string): unknown {
  if (Array.isArray(value)) {
    return value.map((item, i) => dropUngrounded(item, itemSchema(schema), join(path, i), sources, rejected, key)).filter((item) => item !== undefined);
  }
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .map(([name, item]) => [name, dropUngrounded(item, propertySchema(schema, name), join(path, name), sources, rejected, name)] as const)
        .filter(([, item]) => item !== undefined),
    );
  }
  const enumValues = isObject(schema) && Array.isArray(schema.enum) ? schema.enum : undefined;
  const problem = groundingProblem(value, sources, { key, enumValues });
  if (!problem) return value;
  rejected.push({ path, value, reason: problem });
  return undefined;
}
