import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import { useSkillEditorStore } from './skill-editor-store';
import { useSkillImpactStore } from './skill-impact-store';
import { SkillImpactResult } from './SkillImpactResult';

/**
 * Amendment impact of the text in the editor against the active version (POST /skills/impact; writes nothing), and,
 * once that text is activated here, the re-run of the records it named (POST /qc-runs with their ids).
 */
export function SkillImpact({ projectId }: { projectId: string }) {
  const t = useT();
  const text = useSkillEditorStore((state) => state.text);
  const editorBusy = useSkillEditorStore((state) => state.busy);
  const { last, error, isLoading, offer, isStarting, started, startError, compute, rerun } = useSkillImpactStore();
  return (
    <section className="panel">
      <p className="muted small">{t('skillImpact.hint')}</p>
      <div className="skill-actions">
        <button type="button" className="button" data-testid="skill-impact" disabled={isLoading || editorBusy !== null} onClick={() => void compute(projectId, text)}>
          {isLoading ? t('skillImpact.computing') : t('skillImpact.button')}
        </button>
        {offer ? (
          <button type="button" className="button button-primary" data-testid="skill-rerun-affected" disabled={isStarting} onClick={() => void rerun(projectId)}>
            {offer.recordIds ? t('skillImpact.rerunAffected', { count: offer.count }) : t('skillImpact.rerunEverything', { count: offer.count })}
          </button>
        ) : null}
      </div>
      {error ? <ErrorAlert error={error} testId="skill-impact-error" /> : null}
      {startError ? <ErrorAlert error={startError} title={t('skills.startFailed')} testId="skill-rerun-error" /> : null}
      {started ? (
        <p className="alert alert-success" role="status" data-testid="skill-rerun-started" data-run-id={started.id}>
          {t('skillImpact.rerunStarted', { count: started.total })} <a href={routes.trialRuns(projectId)}>{t('skillImpact.openRuns')}</a>
        </p>
      ) : null}
      {last ? <SkillImpactResult projectId={projectId} impact={last.impact} isStale={last.yaml !== text} /> : null}
    </section>
  );
}
