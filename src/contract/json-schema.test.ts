import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonSchema } from './json-schema.js';

describe('jsonSchema', () => {
  it('writes a nullable object, array or enum as a type list, as ajv reports one error for it and the serializer needs no branch check', () => {
    const schema = jsonSchema(
      z.object({
        review: z.looseObject({ reviewer: z.string() }).nullable().describe('the decision'),
        projects: z.array(z.string()).nullable(),
        kind: z.enum(['a', 'b']).nullable(),
        status: z.literal('ok').nullable(),
      }),
    );
    expect(schema.properties).toEqual({
      review: { type: ['object', 'null'], properties: { reviewer: { type: 'string' } }, required: ['reviewer'], additionalProperties: true, description: 'the decision' },
      projects: { type: ['array', 'null'], items: { type: 'string' } },
      kind: { type: ['string', 'null'], enum: ['a', 'b', null] },
      status: { type: ['string', 'null'], enum: ['ok', null] },
    });
  });

  it('drops the draft marker, the safe-integer bounds of z.int() and the noise of empty objects and records', () => {
    expect(jsonSchema(z.object({ count: z.int(), limit: z.int().min(1).max(500), extra: z.looseObject({}), data: z.record(z.string(), z.number()) }))).toEqual({
      type: 'object',
      properties: { count: { type: 'integer' }, limit: { type: 'integer', minimum: 1, maximum: 500 }, extra: { type: 'object', additionalProperties: true }, data: { type: 'object', additionalProperties: { type: 'number' } } },
      required: ['count', 'limit', 'extra', 'data'],
      additionalProperties: false,
    });
  });

  it('never requires a property that may hold anything, since fast-json-stringify answers 500 for a required one left undefined', () => {
    expect(jsonSchema(z.object({ value: z.unknown().describe('the cell'), name: z.string() })).required).toEqual(['name']);
  });

  it('describes requests as clients send them: defaults make a field optional, strict objects refuse unknown fields', () => {
    expect(jsonSchema(z.strictObject({ limit: z.int().min(1).default(50), site: z.string() }), 'input')).toEqual({
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, default: 50 }, site: { type: 'string' } },
      required: ['site'],
      additionalProperties: false,
    });
  });
});
