import { useEffect } from 'react';
import type { QcSkill } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useRoleIn, WRITER_ROLES } from '../../stores/project-role';
import { useQcRunsStore } from '../../stores/qc-runs';
import { useReviewQueueStore } from '../../stores/review-queue';
import { skillsOfTrial } from '../../stores/trial-catalog';
import { enumLabel } from './labels';
import { QcRunProgressBar } from './QcRunProgress';
import { SkillList } from './SkillList';
import { QcRunStatusBadge } from './TrialBadges';

export function QcRunsPage({ projectId, skills }: { projectId: string; skills: QcSkill[] }) {
  const t = useT();
  const format = useFormat();
  const { runs, hasLoaded, isLoading, error, load, watch } = useQcRunsStore();
  const isCurrent = useQcRunsStore((state) => state.projectId === projectId);
  const skillName = new Map(skills.map((skill) => [skill.id, skill.name]));
  const trialSkills = skillsOfTrial(skills, projectId);
  const mayRun = WRITER_ROLES.has(useRoleIn(projectId) ?? 'viewer');
  const waitingForReview = isCurrent ? runs.reduce((sum, run) => sum + run.suspended, 0) : 0;

  useEffect(() => {
    void load(projectId);
  }, [load, projectId]);

  // Live progress while this page is open; the store stops polling once no run is active.
  useEffect(() => watch(), [watch]);

  // Runs that stop for review join the queue: keep the queue count in the tab in step with the bars.
  useEffect(() => {
    if (waitingForReview > 0) void useReviewQueueStore.getState().load(projectId);
  }, [projectId, waitingForReview]);

  return (
    <>
      <section className="panel section" aria-labelledby="skills-title">
        <div className="section-head">
          <div>
            <h2 id="skills-title">{t('skills.title')}</h2>
            <p className="muted small">{t('skills.intro')}</p>
          </div>
        </div>
        <SkillList projectId={projectId} skills={trialSkills} mayRun={mayRun} />
      </section>

      <section className="panel section" aria-labelledby="runs-title">
        <div className="section-head">
          <h2 id="runs-title">{t('runs.title')}</h2>
          <button type="button" className="button button-small" onClick={() => void load(projectId)} disabled={isLoading}>
            {t('common.refresh')}
          </button>
        </div>
        {error ? <ErrorAlert error={error} /> : null}
        {!isCurrent || (!hasLoaded && isLoading) ? <Spinner label={t('common.loading')} /> : null}
        {isCurrent && hasLoaded && runs.length === 0 ? <p className="empty">{t('runs.empty')}</p> : null}
        {isCurrent && runs.length > 0 ? (
          <div className="table-scroll">
            <table className="table runs-table">
              <thead>
                <tr>
                  <th>{t('runs.started')}</th>
                  <th>{t('runs.skill')}</th>
                  <th>{t('runs.trigger')}</th>
                  <th>{t('runs.status')}</th>
                  <th className="progress-col">{t('runs.progress')}</th>
                  <th>{t('runs.outcome')}</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((run) => (
                  <tr key={run.id} data-testid="qc-run-row" data-run-id={run.id}>
                    <td className="nowrap">
                      {format.dateTime(run.createdAt)}
                      <div className="muted small">{t('runs.by', { actor: run.createdBy })}</div>
                    </td>
                    <td>
                      {skillName.get(run.skillId) ?? run.skillId}
                      <div className="muted small">
                        <code>{run.skillId}</code>
                      </div>
                    </td>
                    <td>{enumLabel(t, 'trigger', run.trigger)}</td>
                    <td>
                      <QcRunStatusBadge status={run.status} waiting={run.suspended} testId="qc-run-status" />
                      {run.finishedAt ? <div className="muted small">{format.dateTime(run.finishedAt)}</div> : null}
                    </td>
                    <td className="progress-col">
                      <QcRunProgressBar run={run} />
                      {run.recovering > 0 ? (
                        <div className="muted small" data-testid="qc-run-recovering">
                          {t('runs.recovering', { count: run.recovering })}
                        </div>
                      ) : null}
                    </td>
                    <td className="small">
                      <div className="run-outcome">
                        <span className="count count-ok">{t('runs.completed', { count: run.completed })}</span>
                        {run.suspended > 0 ? (
                          <a className="count count-warn" href={routes.trialReview(projectId)} data-testid="qc-run-review-link">
                            {t('runs.suspended', { count: run.suspended })}
                          </a>
                        ) : null}
                        {run.failed > 0 ? <span className="count count-fail">{t('runs.failed', { count: run.failed })}</span> : null}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </>
  );
}
