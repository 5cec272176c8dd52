import { describe, expect, it } from 'vitest';
import { byRecord, compareRecordIds } from './record-order';

describe('record order', () => {
  it('sorts record ids as numbers where they are numbers, not as text', () => {
    expect(['10', '108', '115', '16', '2'].sort(compareRecordIds)).toEqual(['2', '10', '16', '108', '115']);
    expect(['S10', 'S9', 'S017', 'S18'].sort(compareRecordIds)).toEqual(['S9', 'S10', 'S017', 'S18']);
    expect(byRecord([{ recordId: '16', n: 1 }, { recordId: '108', n: 2 }, { recordId: '16', n: 3 }]).map((row) => row.n)).toEqual([1, 3, 2]);
  });
});
