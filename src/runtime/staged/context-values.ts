/**
 * Checks of a value that goes into a staged agent's context from outside the model (an edit in the state panel, a
 * card's result): the type its stage's schema declares, and a size limit. The model's data block is checked by
 * extraction.ts instead.
 */

/**
 * Longest value, as JSON, one context key may hold. A protocol's longest text (a background, an eligibility
 * list) is a few thousand characters; the context is sent with every message, so a 900 kB "method" would ride
 * along in every prompt and every export.
 */
const MAX_CONTEXT_VALUE_CHARS = 20_000;

type Properties = Record<string, { type?: string | string[] }>;

/** "must be integer, got object" when the schema declares a type for `key` that `value` is not. */
export function valueTypeProblem(schema: Record<string, unknown>, key: string, value: unknown): string | undefined {
  const declared = (((schema as { properties?: Properties }).properties) ?? {})[key]?.type;
  if (!declared || value === null) return undefined;
  const types = Array.isArray(declared) ? declared : [declared];
  const actual = Array.isArray(value) ? 'array' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
  return types.some((t) => t === actual || (t === 'number' && actual === 'integer')) ? undefined : `must be ${types.join(' or ')}, got ${actual}`;
}

/** "is 900002 characters long as JSON, over the limit of 20000" for a value too large to keep. */
export function valueSizeProblem(value: unknown): string | undefined {
  const length = (JSON.stringify(value) ?? '').length;
  return length > MAX_CONTEXT_VALUE_CHARS ? `is ${length} characters long as JSON, over the limit of ${MAX_CONTEXT_VALUE_CHARS}; shorten it` : undefined;
}

/** Every problem of an edit's top-level keys, as "key must be ..." lines. */
export function contextValueProblems(schema: Record<string, unknown>, value: Record<string, unknown>): string[] {
  return Object.entries(value).flatMap(([key, v]) => [valueTypeProblem(schema, key, v), valueSizeProblem(v)].filter((p): p is string => Boolean(p)).map((p) => `${key} ${p}`));
}
