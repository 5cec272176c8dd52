import { z } from 'zod';

export type JsonSchema = { [key: string]: unknown };

/**
 * Which side of a schema to describe: `input` for what a client sends (defaults make fields optional, plain
 * objects stay open), `output` for what the server answers (every field it always sends is required, plain
 * objects are closed: Fastify's serializer drops anything else anyway).
 */
type SchemaSide = 'input' | 'output';

/**
 * The JSON Schema (draft-07) Fastify validates and serializes with, and @fastify/swagger publishes, for a
 * contract schema. zod writes it; `tidy` then brings it to the form the routes declared by hand before the
 * contract existed, so validation, its 400 messages and serialization stay exactly as they were.
 */
export function jsonSchema(schema: z.ZodType, side: SchemaSide = 'output'): JsonSchema {
  const { $schema: _draft, ...rest } = z.toJSONSchema(schema, { target: 'draft-7', io: side }) as JsonSchema;
  return tidy(rest) as JsonSchema;
}

/** Keywords whose value is data (or a list of names), never a schema to walk into. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required', 'description', 'title', 'type', 'pattern', 'format']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'definitions', '$defs']);
/** A property schema made only of these accepts any value, so it cannot be "required": see `tidy`. */
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'deprecated']);

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!isObject(node)) return node;
  let schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) schema[key] = value;
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) schema[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, tidy(sub)]));
    else schema[key] = tidy(value);
  }
  schema = collapseNullable(schema);

  // An open object: `true` is what ajv and fast-json-stringify have always been given for it.
  if (isObject(schema.additionalProperties) && Object.keys(schema.additionalProperties).length === 0) schema.additionalProperties = true;
  if (isObject(schema.properties) && Object.keys(schema.properties).length === 0) delete schema.properties;
  // JSON keys are always strings; z.record says so anyway.
  if (isObject(schema.propertyNames) && schema.propertyNames.type === 'string' && Object.keys(schema.propertyNames).length === 1) delete schema.propertyNames;
  // z.int() bounds itself to safe integers; that says nothing a reader needs, so only real limits are kept.
  if (schema.type === 'integer' || (Array.isArray(schema.type) && schema.type.includes('integer'))) {
    if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
    if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
  }
  // fast-json-stringify answers 500 when a required property is undefined. A property that may hold any
  // value (z.unknown(): a tool's arguments, a query's value) may also be undefined, so it is never required.
  if (Array.isArray(schema.required) && isObject(schema.properties)) {
    const properties = schema.properties;
    const required = schema.required.filter((name) => {
      const property = properties[String(name)];
      return !(isObject(property) && Object.keys(property).every((key) => ANNOTATIONS.has(key)));
    });
    if (required.length) schema.required = required;
    else delete schema.required;
  }
  return schema;
}

/**
 * zod writes a nullable object, array or enum as `anyOf: [X, {type: 'null'}]`. ajv then reports three errors
 * for one wrong value, and fast-json-stringify has to validate each value to pick a branch (a Date is no
 * "string" to ajv). `type: [X, 'null']` means the same and is what the routes always declared.
 */
function collapseNullable(schema: JsonSchema): JsonSchema {
  const { anyOf, ...outer } = schema;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return schema;
  const nullIndex = anyOf.findIndex((branch) => isObject(branch) && branch.type === 'null' && Object.keys(branch).length === 1);
  const other: unknown = anyOf[1 - nullIndex];
  if (nullIndex < 0 || !isObject(other) || typeof other.type !== 'string' || 'anyOf' in other || 'oneOf' in other || 'allOf' in other) return schema;
  const merged: JsonSchema = { ...other, ...outer, type: [other.type, 'null'] };
  if (Array.isArray(other.enum)) merged.enum = [...other.enum, null];
  if ('const' in other) {
    merged.enum = [other.const, null];
    delete merged.const;
  }
  return merged;
}
