import { describe, expect, it } from 'vitest';
import { needsComment, noLongerFiresKey, offeredMoves } from './query-lifecycle';

describe('query lifecycle', () => {
  it('asks for a comment to answer or reopen, not to close', () => {
    expect(needsComment('answered')).toBe(true);
    expect(needsComment('reopened')).toBe(true);
    expect(needsComment('closed')).toBe(false);
  });

  it('tells nobody to close a query that is closed already, or one they may not close', () => {
    expect(noLongerFiresKey({ status: 'closed', allowedTransitions: ['reopened'] }, true)).toBe('queries.noLongerFires.settled');
    expect(noLongerFiresKey({ status: 'cancelled', allowedTransitions: ['reopened'] }, true)).toBe('queries.noLongerFires.settled');
    expect(noLongerFiresKey({ status: 'open', allowedTransitions: ['answered'] }, true)).toBe('queries.noLongerFires.settled');
    expect(noLongerFiresKey({ status: 'open', allowedTransitions: ['answered', 'closed'] }, false)).toBe('queries.noLongerFires.settled');
    expect(noLongerFiresKey({ status: 'open', allowedTransitions: ['answered', 'closed'] }, true)).toBe('queries.noLongerFires');
  });

  it('offers a viewer no move at all', () => {
    expect(offeredMoves({ allowedTransitions: ['reopened'] }, false)).toEqual([]);
    expect(offeredMoves({ allowedTransitions: ['reopened'] }, true)).toEqual(['reopened']);
  });
});
