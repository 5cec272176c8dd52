import { useEffect, useState } from 'react';
import type { ReviewDecision, TaskRun } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useReviewQueueStore } from '../../stores/review-queue';
import { QueryTable } from './QueryTable';
import { StepList } from './StepList';

/** One run waiting at a human_review node: what it found, and the decision that lets it continue. */
export function ReviewItem({ projectId, run, skillName }: { projectId: string; run: TaskRun; skillName: string }) {
  const t = useT();
  const format = useFormat();
  const [comment, setComment] = useState('');
  const queries = useReviewQueueStore((state) => state.queriesByRun[run.id]);
  const review = useReviewQueueStore((state) => state.reviews[run.id]);
  const { loadQueries, decide } = useReviewQueueStore.getState();
  const isSaving = review?.status === 'saving';
  const commentId = `review-comment-${run.id}`;

  const hasQueries = queries !== undefined;
  useEffect(() => {
    if (!hasQueries) void loadQueries(projectId, run.id);
  }, [hasQueries, loadQueries, projectId, run.id]);

  function submit(decision: ReviewDecision): void {
    void decide(projectId, run.id, decision, comment);
  }

  return (
    <article className={`review-item ${review?.status === 'decided' ? 'review-item-decided' : ''}`} data-testid={`review-item-${run.recordId}`} data-task-run-id={run.id}>
      <header className="review-head">
        <div>
          <h3>
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
          <h4>{t('review.queries', { count: queries?.status === 'loaded' ? queries.queries.length : '…' })}</h4>
          {!queries || queries.status === 'loading' ? <Spinner label={t('common.loading')} /> : null}
          {queries?.status === 'error' ? <ErrorAlert error={queries.error} /> : null}
          {queries?.status === 'loaded' && queries.queries.length === 0 ? <p className="muted small">{t('review.noQueries')}</p> : null}
          {queries?.status === 'loaded' && queries.queries.length > 0 ? (
            <QueryTable projectId={projectId} queries={queries.queries} showRecord={false} />
          ) : null}
        </section>
      </div>

      {review?.status === 'decided' ? (
        <div className={`alert ${review.decision === 'approve' ? 'alert-success' : 'alert-info'}`} role="status" data-testid="review-outcome">
          <span className="alert-text">
            {t(review.decision === 'approve' ? 'review.approved' : 'review.rejected', { node: review.run.currentNode })}
          </span>
          <a className="alert-action" href={routes.taskRun(projectId, run.id)} data-testid="review-outcome-link">
            {t('review.followRun')} →
          </a>
        </div>
      ) : (
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
            <button type="button" className="button button-danger" data-testid="review-reject" disabled={isSaving} onClick={() => submit('reject')}>
              {t('review.reject')}
            </button>
            <button type="button" className="button button-success" data-testid="review-approve" disabled={isSaving} onClick={() => submit('approve')}>
              {t('review.approve')}
            </button>
          </div>
        </footer>
      )}
    </article>
  );
}
