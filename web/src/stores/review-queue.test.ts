import { describe, expect, it } from 'vitest';
import type { TaskRun } from '../api';
import { afterDecision } from './review-queue';

// The fields afterDecision reads of a run: its id and review request.
const run = (id: string, queryIds: string[]) =>
  ({ id, findings: queryIds.map((queryId) => ({ id: queryId, status: 'held', heldByTaskRunId: id })), reviewRequest: { dataHash: 'a'.repeat(64) } }) as unknown as TaskRun;

const page = () => ({ runs: [run('r1', ['height', 'weight', 'bmi']), run('r2', ['age'])], reviews: {}, findingDecisions: {}, selection: {} });

describe('the review page after a decision', () => {
  it('shows a run decided finding by finding as the server says it ended (approved when a finding went to the site), each finding with its decision', () => {
    let state = afterDecision(page(), 'approve', [{ taskRunId: 'r1', queryIds: ['height'] }], [{ taskRunId: 'r1', status: 'partly_decided', dataHash: 'b'.repeat(64) }]);
    expect(state.reviews.r1).toBeUndefined();
    expect(state.runs[0]!.reviewRequest?.dataHash).toBe('b'.repeat(64));
    state = afterDecision(state, 'reject', [{ taskRunId: 'r1', queryIds: ['weight', 'bmi'] }], [{ taskRunId: 'r1', status: 'decided', decision: 'approve' }]);
    expect(state.reviews.r1).toEqual({ status: 'decided', decision: 'approve' });
    // Each finding says what happened to it, the last ones too.
    expect(state.findingDecisions).toEqual({ height: 'approve', weight: 'reject', bmi: 'reject' });
    const rejected = afterDecision(page(), 'reject', [{ taskRunId: 'r2', queryIds: ['age'] }], [{ taskRunId: 'r2', status: 'decided', decision: 'reject' }]);
    expect(rejected.reviews.r2).toEqual({ status: 'decided', decision: 'reject' });
  });

  it('shows a whole-run decision as made, and a refused run with the server\'s reason, dropping both from the selection', () => {
    const state = afterDecision(
      { ...page(), selection: { r1: { whole: true, queryIds: [] }, r2: { whole: true, queryIds: [] } } },
      'reject',
      [{ taskRunId: 'r1' }, { taskRunId: 'r2' }],
      [
        { taskRunId: 'r1', status: 'decided', decision: 'reject' },
        { taskRunId: 'r2', status: 'refused', code: 'CONFLICT_STATE', reason: 'already_decided', message: 'Task run r2 is COMPLETED. Reload the review queue.' },
      ],
    );
    expect(state.reviews.r1).toEqual({ status: 'decided', decision: 'reject' });
    const refused = state.reviews.r2;
    expect(refused?.status === 'error' && refused.error).toMatchObject({ status: 409, code: 'CONFLICT_STATE', message: 'Task run r2 is COMPLETED. Reload the review queue.', details: { reason: 'already_decided' } });
    expect(state.selection).toEqual({});
  });
});
