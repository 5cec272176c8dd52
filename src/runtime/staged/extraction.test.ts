import { describe, expect, it } from 'vitest';
import { extractStageData, splitExtractedData } from './extraction.js';

const sampleSizeSchema = {
  type: 'object',
  properties: {
    method: { type: 'string', enum: ['two_means', 'two_proportions', 'time_to_event'] },
    total: { type: 'number' },
    perGroup: { type: 'array', items: { type: 'number' } },
    alpha: { type: 'number' },
    power: { type: 'number' },
    isTwoSided: { type: 'boolean' },
  },
  example: { method: 'two_means', total: 128, perGroup: [64, 64], alpha: 0.05, power: 0.8 },
};

const endpointsSchema = {
  type: 'object',
  properties: {
    primary: { type: 'object', properties: { name: { type: 'string' }, timepoint: { type: 'string' } } },
    secondary: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
  },
};

function reply(data: unknown): string {
  return `Thanks, I have noted that.\n\n<extracted_data>\n${typeof data === 'string' ? data : JSON.stringify(data, null, 2)}\n</extracted_data>`;
}

describe('splitExtractedData', () => {
  it('separates the message the user sees from the block', () => {
    expect(splitExtractedData('Noted.\n<extracted_data>{"total": 128}</extracted_data>\n')).toEqual({ message: 'Noted.', raw: '{"total": 128}' });
  });

  it('removes an unclosed block at the end and keeps its text for repair', () => {
    expect(splitExtractedData('Noted.\n\n<extracted_data>\n{"total": 12')).toEqual({ message: 'Noted.', raw: '\n{"total": 12' });
  });

  it('removes the markdown fence a model put around the block', () => {
    expect(splitExtractedData('Noted.\n```xml\n<extracted_data>{}</extracted_data>\n```')).toEqual({ message: 'Noted.', raw: '{}' });
  });

  it('keeps the text after a block, and returns no raw text without a block', () => {
    expect(splitExtractedData('A <extracted_data>{"a":1}</extracted_data> B')).toEqual({ message: 'A  B', raw: '{"a":1}' });
    expect(splitExtractedData('  Just a question?  ')).toEqual({ message: 'Just a question?' });
  });
});

describe('extractStageData', () => {
  it('keeps what the user said and rejects a sample size the model invented', () => {
    const result = extractStageData({
      reply: reply({ method: 'two_means', total: 200, alpha: 0.05, power: 0.8 }),
      schema: sampleSizeSchema,
      sources: ['Two means, alpha 5% and 80% power please.'],
    });
    expect(result.data).toEqual({ method: 'two_means', alpha: 0.05, power: 0.8 });
    expect(result.rejected).toEqual([{ path: 'total', value: 200, reason: '200 was not found in what the user said or a tool computed' }]);
    expect(result.problems).toEqual([]);
    expect(result.parsedAs).toBe('exact');
  });

  it('accepts numbers a tool computed this turn', () => {
    const result = extractStageData({
      reply: reply({ total: 128, perGroup: [64, 64] }),
      schema: sampleSizeSchema,
      sources: ['Please calculate it.', '{"total":128,"perGroup":[64,64]}'],
    });
    expect(result.data).toEqual({ total: 128, perGroup: [64, 64] });
    expect(result.rejected).toEqual([]);
  });

  it('drops undeclared keys and values of the wrong type, with the reason', () => {
    const result = extractStageData({
      reply: reply({ total: '128', alpha: 0.05, effectSize: 0.5, method: 'bayesian' }),
      schema: sampleSizeSchema,
      sources: ['n 128, alpha 0.05, effect 0.5, bayesian'],
    });
    expect(result.data).toEqual({ alpha: 0.05 });
    expect(result.rejected).toEqual(
      expect.arrayContaining([
        { path: 'effectSize', value: 0.5, reason: 'not a field of this stage' },
        { path: 'total', value: '128', reason: 'must be number' },
        { path: 'method', value: 'bayesian', reason: 'must be equal to one of the allowed values' },
      ]),
    );
    expect(result.rejected).toHaveLength(3);
  });

  it('drops empty values silently: not said is not a value', () => {
    const result = extractStageData({
      reply: reply({ method: '', total: null, perGroup: [], alpha: 0.05, power: {} }),
      schema: sampleSizeSchema,
      sources: ['alpha 0.05'],
    });
    expect(result).toMatchObject({ data: { alpha: 0.05 }, rejected: [], problems: [] });
  });

  it('never records a boolean the parser or the model filled in on a subject nobody raised', () => {
    const result = extractStageData({ reply: reply({ alpha: 0.05, isTwoSided: false }), schema: sampleSizeSchema, sources: ['alpha 0.05'] });
    expect(result.data).toEqual({ alpha: 0.05 });
    expect(result.rejected).toEqual([{ path: 'isTwoSided', value: false, reason: expect.stringContaining('"isTwoSided" did not come up') }]);
    const said = extractStageData({ reply: reply({ isTwoSided: true }), schema: sampleSizeSchema, sources: ['a two-sided test'] });
    expect(said.data).toEqual({ isTwoSided: true });
  });

  it('walks nested objects and arrays, naming each rejected leaf by its path', () => {
    const result = extractStageData({
      reply: reply({ primary: { name: 'Change in systolic blood pressure', timepoint: 'week 24', unit: 'mmHg' }, secondary: [{ name: 'Quality of life' }, { name: 'Adverse events' }] }),
      schema: endpointsSchema,
      sources: ['Primary endpoint: change in systolic blood pressure at week 12. We also look at adverse events.'],
    });
    expect(result.data).toEqual({ primary: { name: 'Change in systolic blood pressure' }, secondary: [{ name: 'Adverse events' }] });
    expect(result.rejected.map((r) => r.path).sort()).toEqual(['primary.timepoint', 'primary.unit', 'secondary.0.name']);
    expect(result.rejected.find((r) => r.path === 'primary.timepoint')!.reason).toMatch(/the number 24/);
  });

  it('keeps part of an object whose schema requires more: the rest may come in a later message', () => {
    const schema = { type: 'object', properties: { primary: { type: 'object', properties: { name: { type: 'string' }, timepoint: { type: 'string' } }, required: ['name', 'timepoint'] } }, required: ['primary'] };
    const result = extractStageData({ reply: reply({ primary: { timepoint: 'week 12' } }), schema, sources: ['assessed at week 12'] });
    expect(result).toMatchObject({ data: { primary: { timepoint: 'week 12' } }, rejected: [], problems: [] });
  });

  it('repairs a sloppy block with the shared parser and says so', () => {
    const result = extractStageData({ reply: reply("{alpha: 0.05, power: 0.9,}"), schema: sampleSizeSchema, sources: ['alpha 0.05 power 90%'] });
    expect(result).toMatchObject({ data: { alpha: 0.05, power: 0.9 }, parsedAs: 'repaired', problems: [] });
  });

  it('returns nothing and no problem without a block or with an empty one', () => {
    expect(extractStageData({ reply: 'Which population do you have in mind?', schema: sampleSizeSchema, sources: [] })).toEqual({ data: {}, rejected: [], problems: [], parsedAs: 'none' });
    expect(extractStageData({ reply: reply('  '), schema: sampleSizeSchema, sources: [] })).toEqual({ data: {}, rejected: [], problems: [], parsedAs: 'none' });
    expect(extractStageData({ reply: reply({}), schema: sampleSizeSchema, sources: [] })).toMatchObject({ data: {}, rejected: [], problems: [] });
  });

  it('says why an unusable block cannot be used', () => {
    const result = extractStageData({ reply: reply('the user gave no numbers'), schema: sampleSizeSchema, sources: [] });
    expect(result.data).toEqual({});
    expect(result.parsedAs).toBe('failed');
    expect(result.problems).toEqual([expect.stringMatching(/^The <extracted_data> block cannot be used: No JSON object found/)]);
  });

  it('validates against the schema, not against its example', () => {
    const schema = { ...sampleSizeSchema, example: { total: 'a string where a number belongs' } };
    const result = extractStageData({ reply: reply({ total: 128 }), schema, sources: ['128 patients'] });
    expect(result).toMatchObject({ data: { total: 128 }, rejected: [], problems: [] });
  });
});
