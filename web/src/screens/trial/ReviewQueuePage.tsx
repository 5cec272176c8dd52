import { useEffect, useState } from 'react';
import type { QcSkill } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useRoleIn, WRITER_ROLES } from '../../stores/project-role';
import { REVIEW_PAGE_SIZE, selectedCount, useReviewQueueStore } from '../../stores/review-queue';
import { ReviewItem } from './ReviewItem';
import { Pager } from './Pager';

/**
 * The review queue, one page per request (each run comes with its findings), oldest first. A reviewer decides a
 * record, a single finding of it, or a selection with one comment; a viewer sees the queue without the controls.
 */
export function ReviewQueuePage({ projectId, skills }: { projectId: string; skills: QcSkill[] }) {
  const t = useT();
  const { runs, total, page, hasLoaded, isLoading, error, conflict, selection, reviews, load, decide, selectPage, dismissConflict } = useReviewQueueStore();
  const isCurrent = useReviewQueueStore((state) => state.projectId === projectId);
  const mayDecide = WRITER_ROLES.has(useRoleIn(projectId) ?? 'viewer');
  const skillName = new Map(skills.map((skill) => [skill.id, skill.name]));
  const [bulkComment, setBulkComment] = useState('');
  const selected = selectedCount(selection);
  const undecided = runs.filter((run) => reviews[run.id]?.status !== 'decided');
  const isAllSelected = undecided.length > 0 && undecided.every((run) => selection[run.id]?.whole);
  const isSaving = Object.values(reviews).some((review) => review.status === 'saving');

  // Fresh on every visit: other reviewers work the same queue.
  useEffect(() => {
    void load(projectId);
  }, [load, projectId]);

  async function bulk(decision: 'approve' | 'reject'): Promise<void> {
    if (await decide(projectId, decision, bulkComment, selection)) setBulkComment('');
  }

  // Someone deciding the whole run first, and the review changing under the page (findings decided elsewhere, a new
  // import), are different news: say which.
  const conflictTitle = conflict?.details?.reason === 'review_data_changed' ? t('review.dataChangedTitle') : t('review.conflictTitle');

  return (
    <section className="section" aria-labelledby="review-title">
      <div className="section-head">
        <div>
          <h2 id="review-title">{t('review.title')}</h2>
          <p className="muted small">{t('review.intro')}</p>
        </div>
        <button type="button" className="button button-small" data-testid="review-refresh" onClick={() => void load(projectId)} disabled={isLoading}>
          {t('common.refresh')}
        </button>
      </div>
      {conflict ? (
        <ErrorAlert
          error={conflict}
          title={conflictTitle}
          testId="review-conflict"
          action={
            <button type="button" className="button button-small" onClick={dismissConflict}>
              {t('common.dismiss')}
            </button>
          }
        />
      ) : null}
      {error ? <ErrorAlert error={error} /> : null}
      {!isCurrent || (!hasLoaded && isLoading) ? <Spinner label={t('common.loading')} /> : null}
      {isCurrent && hasLoaded && runs.length === 0 ? (
        <p className="empty panel" data-testid="review-empty">
          {t('review.empty')}
        </p>
      ) : null}
      {isCurrent && hasLoaded && total > 0 ? (
        <p className="muted small" data-testid="review-total">
          {t('review.total', { count: total })}
        </p>
      ) : null}
      {isCurrent && mayDecide && undecided.length > 0 ? (
        <div className="panel review-bulk" data-testid="review-bulk">
          <label className="small">
            <input type="checkbox" data-testid="review-select-page" checked={isAllSelected} disabled={isSaving} onChange={() => selectPage(!isAllSelected)} /> {t('review.selectPage')}
          </label>
          <span className="small" data-testid="review-selected">
            {t('review.selected', { count: selected })}
          </span>
          <input
            type="text"
            className="review-bulk-comment"
            data-testid="review-bulk-comment"
            placeholder={t('review.comment')}
            aria-label={t('review.comment')}
            value={bulkComment}
            disabled={isSaving}
            onChange={(event) => setBulkComment(event.target.value)}
          />
          <button type="button" className="button button-small button-danger" data-testid="review-bulk-reject" disabled={isSaving || selected === 0} onClick={() => void bulk('reject')}>
            {t('review.rejectSelected')}
          </button>
          <button type="button" className="button button-small button-success" data-testid="review-bulk-approve" disabled={isSaving || selected === 0} onClick={() => void bulk('approve')}>
            {t('review.approveSelected')}
          </button>
        </div>
      ) : null}
      <div className="review-list">
        {isCurrent ? runs.map((run) => <ReviewItem key={run.id} projectId={projectId} run={run} skillName={skillName.get(run.skillId) ?? run.skillId} mayDecide={mayDecide} />) : null}
      </div>
      {isCurrent ? <Pager page={page} pageSize={REVIEW_PAGE_SIZE} total={total} isLoading={isLoading} onPage={(next) => void load(projectId, next)} testId="review-pager" /> : null}
    </section>
  );
}
