import { useEffect } from 'react';
import type { QcSkill } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useReviewQueueStore } from '../../stores/review-queue';
import { ReviewItem } from './ReviewItem';

export function ReviewQueuePage({ projectId, skills }: { projectId: string; skills: QcSkill[] }) {
  const t = useT();
  const { runs, hasLoaded, isLoading, error, conflict, load, dismissConflict } = useReviewQueueStore();
  const isCurrent = useReviewQueueStore((state) => state.projectId === projectId);
  const skillName = new Map(skills.map((skill) => [skill.id, skill.name]));

  // Fresh on every visit: other reviewers work the same queue.
  useEffect(() => {
    void load(projectId);
  }, [load, projectId]);

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
          title={t('review.conflictTitle')}
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
      <div className="review-list">
        {isCurrent
          ? runs.map((run) => <ReviewItem key={run.id} projectId={projectId} run={run} skillName={skillName.get(run.skillId) ?? run.skillId} />)
          : null}
      </div>
    </section>
  );
}
