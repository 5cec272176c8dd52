import { useEffect, useState } from 'react';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Spinner } from '../../../components/Spinner';
import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import { useTrialCatalogStore } from '../../../stores/trial-catalog';
import { useSkillEditorStore } from './skill-editor-store';
import { SkillDryRun } from './SkillDryRun';
import { SkillImpact } from './SkillImpact';
import { useSkillImpactStore } from './skill-impact-store';
import { SkillProblems } from './SkillProblems';
import { SkillTextEditor } from './SkillTextEditor';
import { SkillVersions } from './SkillVersions';

/**
 * One skill in the editor (or a new one when `skillId` is null): Validate against this trial's dictionary, Save
 * draft, Activate, Dry run, Impact (and the re-run it offers once activated), and its versions. `canEdit` (change
 * this skill) and `canTry` (validate and dry-run: a writer of the trial; a viewer only reads) follow the role in the
 * trial, so no button is offered that the server would refuse; the server still decides.
 */
export function SkillEditorPanel({ projectId, skillId, canEdit, canTry }: { projectId: string; skillId: string | null; canEdit: boolean; canTry: boolean }) {
  const t = useT();
  const [comment, setComment] = useState('');
  // A new object on every click, so a second click on the same problem scrolls to it again.
  const [goToLine, setGoToLine] = useState<{ line: number } | null>(null);
  const store = useSkillEditorStore();
  const { text, savedText, viewing, validation, busy, error, outcome, versions } = store;

  useEffect(() => {
    // An impact of this skill stays (a new skill's first save moves the page to its own address); another's goes.
    const impact = useSkillImpactStore.getState();
    if (impact.last?.impact.skillId !== skillId) impact.reset();
    void useSkillEditorStore.getState().open(skillId, projectId, t);
    // Not on `t`: switching the language must not reopen the skill and drop what is being written.
  }, [skillId, projectId]);

  const save = async () => {
    const savedId = await store.save(comment);
    if (savedId && savedId !== skillId) window.location.assign(routes.trialSkill(projectId, savedId));
    if (savedId) void useTrialCatalogStore.getState().load();
  };
  const activate = async () => {
    // The text activated is the saved text (Activate needs no unsaved changes); the last impact applies only to it.
    const activatedText = text;
    if (!(await store.activate(comment))) return;
    void useTrialCatalogStore.getState().load();
    if (store.skillId) useSkillImpactStore.getState().activated(store.skillId, activatedText);
  };

  if (busy === 'load' && !text && !viewing) return <Spinner label={t('common.loading')} />;

  return (
    <section>
      {error ? <ErrorAlert error={error} testId="skill-error" /> : null}
      {outcome ? (
        <p className="alert alert-success" role="status" data-testid="skill-outcome">
          {outcome.kind === 'saved' ? t('skillEditor.saved', { version: outcome.version }) : t('skillEditor.activated', { version: outcome.version })}
        </p>
      ) : null}
      {viewing ? (
        <div className="panel" data-testid="skill-version-view">
          <p>
            <strong>{t('skillEditor.version.viewing', { version: viewing.version, status: t(`skillEditor.version.status.${viewing.status}`) })}</strong>
          </p>
          <pre className="skill-yaml-view">{viewing.yaml}</pre>
          <div className="skill-actions">
            <button type="button" className="button" onClick={() => store.closeView(false)}>
              {t('skillEditor.version.back')}
            </button>
            {canEdit ? (
              <button type="button" className="button" onClick={() => store.closeView(true)}>
                {t('skillEditor.version.copy')}
              </button>
            ) : null}
          </div>
        </div>
      ) : (
        <>
          {!canEdit ? <p className="muted small">{t('skillEditor.readOnly')}</p> : null}
          <SkillTextEditor text={text} onChange={store.setText} readOnly={!canEdit} validation={validation} onSuggestion={store.applySuggestion} goToLine={goToLine} />
          <div className="skill-actions">
            {canTry ? (
              <button type="button" className="button" data-testid="skill-validate" disabled={busy !== null} onClick={() => void store.validate(projectId)}>
                {t('skillEditor.validate')}
              </button>
            ) : null}
            {canEdit ? (
              <>
                <input className="input" value={comment} placeholder={t('skillEditor.comment')} aria-label={t('skillEditor.comment')} onChange={(event) => setComment(event.target.value)} />
                <button type="button" className="button" data-testid="skill-save" disabled={busy !== null || text === savedText} onClick={() => void save()}>
                  {t('skillEditor.save')}
                </button>
                <button type="button" className="button button-primary" data-testid="skill-activate" disabled={busy !== null || !store.skillId || text !== savedText} onClick={() => void activate()}>
                  {t('skillEditor.activate')}
                </button>
              </>
            ) : null}
            {text !== savedText && store.skillId ? <span className="muted small">{t('skillEditor.unsaved')}</span> : null}
          </div>
          {validation ? <SkillProblems validation={validation} text={text} onSuggestion={canEdit ? store.applySuggestion : undefined} onGoToLine={(line) => setGoToLine({ line })} /> : null}
          {canTry ? <SkillDryRun projectId={projectId} /> : null}
          {canEdit ? <SkillImpact projectId={projectId} /> : null}
        </>
      )}
      <SkillVersions versions={versions} onView={(version) => void store.view(version)} />
    </section>
  );
}
