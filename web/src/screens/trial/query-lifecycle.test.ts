import { describe, expect, it } from 'vitest';
import { allowedTransitions, needsComment } from './query-lifecycle';

describe('query lifecycle', () => {
  it('offers the moves the server allows from each status', () => {
    expect(allowedTransitions('open')).toEqual(['answered', 'closed']);
    expect(allowedTransitions('answered')).toEqual(['closed', 'reopened']);
    expect(allowedTransitions('reopened')).toEqual(['answered', 'closed']);
    expect(allowedTransitions('closed')).toEqual(['reopened']);
  });

  it('asks for a comment to answer or reopen, not to close', () => {
    expect(needsComment('answered')).toBe(true);
    expect(needsComment('reopened')).toBe(true);
    expect(needsComment('closed')).toBe(false);
  });
});
