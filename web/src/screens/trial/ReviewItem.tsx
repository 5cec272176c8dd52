import { useState } from 'react';
import type { DataQuery, ReviewDecision, TaskRun } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { formatValue } from '../../i18n/format';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { heldFindings, useReviewQueueStore } from '../../stores/review-queue';
import { StepList } from './StepList';
import { QueryStatusBadge, SeverityBadge } from './TrialBadges';

/**
 * One run waiting at a review: what it found, and the decisions that let it continue, for the whole record or
 * finding by finding (a height finding approved, a weight finding rejected). Everything shown comes with the
 * page's one request; `mayDecide` is false for a role that may not change the trial's data (a viewer).
 */
export function ReviewItem({ projectId, run, skillName, mayDecide }: { projectId: string; run: TaskRun; skillName: string; mayDecide: boolean }) {
  const t = useT();
  const format = useFormat();
  const [comment, setComment] = useState('');
  const review = useReviewQueueStore((state) => state.reviews[run.id]);
  const selection = useReviewQueueStore((state) => state.selection[run.id]);
  const findingDecisions = useReviewQueueStore((state) => state.findingDecisions);
  const { decide, toggleRun, toggleFinding } = useReviewQueueStore.getState();
  const isSaving = review?.status === 'saving';
  const commentId = `review-comment-${run.id}`;
  const findings = run.findings ?? [];
  const held = heldFindings(run);
  const undecided = held.filter((query) => !findingDecisions[query.id]);
  const isDecided = review?.status === 'decided';

  function submitRun(decision: ReviewDecision): void {
    void decide(projectId, decision, comment, { [run.id]: { whole: true, queryIds: [] } });
  }

  function submitFinding(query: DataQuery, decision: ReviewDecision): void {
    void decide(projectId, decision, comment, { [run.id]: { whole: false, queryIds: [query.id] } });
  }

  return (
    <article className={`review-item ${isDecided ? 'review-item-decided' : ''}`} data-testid={`review-item-${run.recordId}`} data-task-run-id={run.id}>
      <header className="review-head">
        <div>
          <h3>
            {mayDecide && !isDecided ? (
              <input
                type="checkbox"
                className="review-select"
                data-testid="review-select"
                aria-label={t('review.selectRecord', { recordId: run.recordId })}
                checked={selection?.whole ?? false}
                disabled={isSaving}
                onChange={() => toggleRun(run.id)}
              />
            ) : null}{' '}
            <a href={routes.trialRecord(projectId, run.recordId)}>{t('review.record', { recordId: run.recordId })}</a>
          </h3>
          <p className="muted small">
            {skillName} · {t('review.atNode')} <code>{run.currentNode}</code> · {t('review.waitingSince', { time: format.dateTime(run.updatedAt) })}
          </p>
        </div>
        <a className="button button-small" href={routes.taskRun(projectId, run.id)} data-testid="review-open-run">
          {t('review.openRun')}
        </a>
      </header>

      {run.reviewDescription ? (
        <p className="review-instruction" data-testid="review-instruction">
          {run.reviewDescription}
        </p>
      ) : null}
      {run.reviewRequest?.reason ? (
        <p className="muted small" data-testid="review-reason">
          {t('review.technicalReason')}: <code>{run.reviewRequest.reason}</code>
        </p>
      ) : null}
      <div className="review-body">
        <section>
          <h4>{t('review.steps')}</h4>
          <StepList steps={run.steps} />
        </section>
        <section>
          <h4>{t('review.findings', { count: findings.length })}</h4>
          {findings.length === 0 ? <p className="muted small">{t('review.noQueries')}</p> : null}
          {findings.length > 0 ? (
            <div className="table-scroll">
              <table className="table query-table" data-testid="review-findings">
                <tbody>
                  {findings.map((query) => {
                    const isHeld = held.includes(query);
                    const decided = findingDecisions[query.id];
                    return (
                      <tr key={query.id} data-testid={`review-finding-${query.field}`} data-query-id={query.id}>
                        <td>
                          {mayDecide && isHeld && !decided && !isDecided ? (
                            <input
                              type="checkbox"
                              data-testid="review-select-finding"
                              aria-label={t('review.selectFinding', { field: query.field, recordId: run.recordId })}
                              checked={selection?.whole || (selection?.queryIds.includes(query.id) ?? false)}
                              disabled={isSaving || selection?.whole}
                              onChange={() => toggleFinding(run.id, query.id)}
                            />
                          ) : null}
                        </td>
                        <td>
                          <code>{query.eventName ? `${query.eventName} · ` : ''}{query.field}</code>
                          <div className="small">{formatValue(query.value)}</div>
                        </td>
                        <td>
                          <SeverityBadge severity={query.severity} />
                        </td>
                        <td className="small">{query.message}</td>
                        <td>
                          {decided ? (
                            <span className="small" data-testid="review-finding-decided">
                              {t(decided === 'approve' ? 'review.findingApproved' : 'review.findingRejected')}
                            </span>
                          ) : (
                            <QueryStatusBadge status={query.status} />
                          )}
                        </td>
                        <td className="nowrap">
                          {mayDecide && isHeld && !decided && !isDecided && undecided.length > 1 ? (
                            <>
                              <button type="button" className="button button-small button-danger" data-testid="review-finding-reject" disabled={isSaving} onClick={() => submitFinding(query, 'reject')}>
                                {t('review.reject')}
                              </button>{' '}
                              <button type="button" className="button button-small button-success" data-testid="review-finding-approve" disabled={isSaving} onClick={() => submitFinding(query, 'approve')}>
                                {t('review.approve')}
                              </button>
                            </>
                          ) : null}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          ) : null}
        </section>
      </div>

      {isDecided ? (
        <div className={`alert ${review.decision === 'approve' ? 'alert-success' : 'alert-info'}`} role="status" data-testid="review-outcome">
          <span className="alert-text">{t(review.decision === 'approve' ? 'review.approvedRun' : 'review.rejectedRun')}</span>
          <a className="alert-action" href={routes.taskRun(projectId, run.id)} data-testid="review-outcome-link">
            {t('review.followRun')} →
          </a>
        </div>
      ) : mayDecide ? (
        <footer className="review-decision">
          {review?.status === 'error' ? <ErrorAlert error={review.error} title={t('review.decisionFailed')} /> : null}
          <label htmlFor={commentId} className="visually-hidden">
            {t('review.comment')}
          </label>
          <textarea
            id={commentId}
            rows={2}
            data-testid="review-comment"
            placeholder={t('review.comment')}
            value={comment}
            disabled={isSaving}
            onChange={(event) => setComment(event.target.value)}
          />
          <div className="review-buttons">
            {isSaving ? <Spinner label={t('common.saving')} /> : null}
            <button type="button" className="button button-danger" data-testid="review-reject" disabled={isSaving} onClick={() => submitRun('reject')}>
              {undecided.length > 1 ? t('review.rejectAll') : t('review.reject')}
            </button>
            <button type="button" className="button button-success" data-testid="review-approve" disabled={isSaving} onClick={() => submitRun('approve')}>
              {undecided.length > 1 ? t('review.approveAll') : t('review.approve')}
            </button>
          </div>
        </footer>
      ) : null}
    </article>
  );
}
