import { useEffect } from 'react';
import type { QcSkill } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { isTaskRunActive, TASK_RUN_POLL_INTERVAL_MS, useTaskRunStore } from '../../stores/task-run';
import { AuditTrail } from './AuditTrail';
import { enumLabel } from './labels';
import { QueryTable } from './QueryTable';
import { StepList } from './StepList';
import { TaskRunStatusBadge } from './TrialBadges';

export function TaskRunPage({ projectId, taskRunId, skills }: { projectId: string; taskRunId: string; skills: QcSkill[] }) {
  const t = useT();
  const format = useFormat();
  const entry = useTaskRunStore((state) => state.entries[taskRunId]);
  const load = useTaskRunStore((state) => state.load);

  // After a review the run continues as a job: follow it until it completes, fails or stops for review again.
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let isMounted = true;
    async function refresh(): Promise<void> {
      const view = await load(projectId, taskRunId);
      if (isMounted && view && isTaskRunActive(view.run)) timer = setTimeout(() => void refresh(), TASK_RUN_POLL_INTERVAL_MS);
    }
    void refresh();
    return () => {
      isMounted = false;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [load, projectId, taskRunId]);

  if (!entry || entry.status === 'loading') return <Spinner label={t('common.loading')} />;
  if (entry.status === 'error') return <ErrorAlert error={entry.error} />;

  const { run, queries, audit } = entry.view;
  const skillName = skills.find((skill) => skill.id === run.skillId)?.name ?? run.skillId;
  return (
    <div className="section" data-testid="task-run">
      <div className="section-head">
        <div>
          <a className="back-link" href={routes.trialReview(projectId)}>
            ← {t('taskRun.backToReview')}
          </a>
          <h2 className="title-with-badge">
            <span>
              {t('taskRun.heading', { skill: skillName })}{' '}
              <a href={routes.trialRecord(projectId, run.recordId)} data-testid="task-run-record">
                {run.recordId}
              </a>
            </span>
            <TaskRunStatusBadge status={run.status} testId="task-run-status" />
          </h2>
        </div>
        {isTaskRunActive(run) ? <Spinner label={t('taskRun.live')} /> : null}
      </div>

      <section className="panel section">
        <dl className="facts facts-wide">
          <dt>{t('taskRun.status')}</dt>
          <dd>{enumLabel(t, 'taskRun.status', run.status)}</dd>
          <dt>{t('taskRun.currentNode')}</dt>
          <dd>
            <code>{run.currentNode}</code>
          </dd>
          <dt>{t('taskRun.created')}</dt>
          <dd>{format.dateTime(run.createdAt)}</dd>
          <dt>{t('taskRun.updated')}</dt>
          <dd>{format.dateTime(run.updatedAt)}</dd>
          {run.completedAt ? (
            <>
              <dt>{t('taskRun.completed')}</dt>
              <dd>{format.dateTime(run.completedAt)}</dd>
            </>
          ) : null}
          {run.review ? (
            <>
              <dt>{t('taskRun.review')}</dt>
              <dd data-testid="task-run-review">
                {t('taskRun.reviewText', {
                  decision: enumLabel(t, 'step.outcome', run.review.decision),
                  reviewer: run.review.reviewer,
                  time: format.dateTime(run.review.decidedAt),
                })}
                {run.review.comment ? <span className="muted"> — “{run.review.comment}”</span> : null}
              </dd>
            </>
          ) : null}
          {run.error ? (
            <>
              <dt>{t('taskRun.error')}</dt>
              <dd className="error-cell">{run.error}</dd>
            </>
          ) : null}
        </dl>
      </section>

      <section className="panel section">
        <h3 className="panel-heading">{t('taskRun.steps')}</h3>
        <StepList steps={run.steps} />
      </section>

      <section className="panel section">
        <h3 className="panel-heading">{t('taskRun.queries', { count: queries.length })}</h3>
        {queries.length === 0 ? <p className="muted small">{t('review.noQueries')}</p> : <QueryTable projectId={projectId} queries={queries} showRecord={false} />}
      </section>
      <section className="panel section">
        <h3 className="panel-heading">{t('taskRun.audit')}</h3>
        <AuditTrail entries={audit} testId="task-run-audit-entry" />
      </section>
    </div>
  );
}
