import { describe, expect, it } from 'vitest';
import { DEFAULT_QUERY_PAGING, nextSort, pageCount, pageRows, setSelected } from './query-paging';

describe('query list paging helpers', () => {
  it('flips the order of the sorted column and starts another at its natural order, back on page 1', () => {
    const onPage3 = { ...DEFAULT_QUERY_PAGING, page: 3 };
    expect(nextSort(onPage3, 'createdAt')).toEqual({ ...DEFAULT_QUERY_PAGING, order: 'asc', page: 1 });
    expect(nextSort(nextSort(onPage3, 'createdAt'), 'createdAt')).toMatchObject({ sort: 'createdAt', order: 'desc' });
    expect(nextSort(onPage3, 'recordId')).toMatchObject({ sort: 'recordId', order: 'asc', page: 1 });
    expect(nextSort(onPage3, 'severity')).toMatchObject({ sort: 'severity', order: 'desc' });
  });

  it('counts pages and the rows a page shows, the last partial page and an empty list included', () => {
    expect(pageCount(646, 50)).toBe(13);
    expect(pageCount(500, 500)).toBe(1);
    expect(pageCount(0, 50)).toBe(1);
    expect(pageRows(13, 50, 646)).toEqual({ from: 601, to: 646 });
    expect(pageRows(1, 50, 20)).toEqual({ from: 1, to: 20 });
    expect(pageRows(1, 50, 0)).toEqual({ from: 0, to: 0 });
    expect(pageRows(5, 50, 20)).toEqual({ from: 0, to: 0 });
  });

  it('ticks a page without doubling rows already ticked, and clears only what is asked', () => {
    const ticked = setSelected(['b'], ['a', 'b', 'c', 'a'], true);
    expect(ticked).toEqual(['b', 'a', 'c']);
    expect(setSelected(ticked, ['a', 'c'], false)).toEqual(['b']);
    expect(setSelected([], [], true)).toEqual([]);
  });
});
