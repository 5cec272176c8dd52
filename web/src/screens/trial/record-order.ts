/** Record ids as people count them: 2, 10, 16, 108 and S9 before S10 (text order gives 10, 108, 16, 2). */
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' });

export function compareRecordIds(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** A copy of `rows` in natural record order, stable for rows of one record. */
export function byRecord<T extends { recordId: string }>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => compareRecordIds(a.recordId, b.recordId));
}
