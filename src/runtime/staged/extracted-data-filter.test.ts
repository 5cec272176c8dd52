import { describe, expect, it } from 'vitest';
import { createExtractedDataFilter } from './extracted-data-filter.js';
import { splitExtractedData } from './extraction.js';

function streamed(deltas: readonly string[]): string {
  const filter = createExtractedDataFilter();
  return deltas.map((delta) => filter.push(delta)).join('') + filter.end();
}

/** Every way of cutting the reply in two, and in three around each point. */
function everySplit(reply: string): string[][] {
  const splits: string[][] = [];
  for (let i = 0; i <= reply.length; i++) {
    splits.push([reply.slice(0, i), reply.slice(i)]);
    if (i + 3 <= reply.length) splits.push([reply.slice(0, i), reply.slice(i, i + 3), reply.slice(i + 3)]);
  }
  return splits;
}

const REPLY = 'A two-arm RCT with `128` adults <3 and `code`. Shall we go on?\n\n<extracted_data>\n{"total": 128, "note": "<b>"}\n</extracted_data>';
const FENCED = 'Noted the design.\n\n```json\n<extracted_data>\n{"type": "RCT"}\n</extracted_data>\n```';
const WITHOUT_BLOCK = 'Here is `x` and a <tag> and <extra and ```python\nprint(1)\n```';

describe('createExtractedDataFilter', () => {
  it.each([
    ['a reply with a block', REPLY],
    ['a block inside a markdown fence', FENCED],
    ['a reply without a block, with look-alike text', WITHOUT_BLOCK],
  ])('streams exactly the message the user will see, whatever the split (%s)', (_, reply) => {
    const expected = splitExtractedData(reply).message;
    for (const deltas of everySplit(reply)) expect(streamed(deltas), JSON.stringify(deltas)).toBe(expected);
  });

  it('streams character by character', () => {
    expect(streamed([...REPLY])).toBe(splitExtractedData(REPLY).message);
  });

  it('holds back a possible tag until it is clear, then lets text through', () => {
    const filter = createExtractedDataFilter();
    expect(filter.push('Done. <extra')).toBe('Done.');
    expect(filter.push('cted_data>{"a"')).toBe('');
    expect(filter.push(': 1}</extracted_data> and more')).toBe('');
    expect(filter.end()).toBe('');

    const other = createExtractedDataFilter();
    expect(other.push('Use <extra')).toBe('Use');
    expect(other.push(' caution')).toBe(' <extra caution');
    expect(other.end()).toBe('');
  });

  it('releases a held partial tag at the end when no tag followed', () => {
    const filter = createExtractedDataFilter();
    expect(filter.push('cut off at <extracted_da')).toBe('cut off at');
    expect(filter.end()).toBe(' <extracted_da');
  });

  it('reads the tag in any letter case, as splitExtractedData does', () => {
    expect(streamed(['Ok <EXTRACTED', '_DATA>{}</EXTRACTED_DATA>'])).toBe(splitExtractedData('Ok <EXTRACTED_DATA>{}</EXTRACTED_DATA>').message);
  });
});
