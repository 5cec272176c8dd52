import { describe, expect, it } from 'vitest';
import { needsComment } from './query-lifecycle';

describe('query lifecycle', () => {
  it('asks for a comment to answer or reopen, not to close', () => {
    expect(needsComment('answered')).toBe(true);
    expect(needsComment('reopened')).toBe(true);
    expect(needsComment('closed')).toBe(false);
  });
});
