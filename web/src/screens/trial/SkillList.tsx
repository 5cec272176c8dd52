import type { QcSkill } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { useQcRunsStore } from '../../stores/qc-runs';

/**
 * Installed skills with their schedule; "Run QC" starts one over every record of the project. `mayRun` is false for a
 * role that may not change the trial's data (a viewer): the button is not offered.
 */
export function SkillList({ projectId, skills, mayRun }: { projectId: string; skills: QcSkill[]; mayRun: boolean }) {
  const t = useT();
  const format = useFormat();
  const startingSkillId = useQcRunsStore((state) => state.startingSkillId);
  const startError = useQcRunsStore((state) => state.startError);
  const start = useQcRunsStore((state) => state.start);

  if (skills.length === 0) return <p className="empty">{t('skills.empty')}</p>;

  return (
    <>
      {startError ? <ErrorAlert error={startError} title={t('skills.startFailed')} testId="qc-start-error" /> : null}
      <ul className="skill-list">
        {skills.map((skill) => {
          const isForProject = !skill.projects || skill.projects.includes(projectId);
          const isStarting = startingSkillId === skill.id;
          // A skill never activated cannot run; the Skills tab lists and edits it.
          if (skill.status === 'draft') return null;
          // Listed to admins only: a skill file with problems, which no run can use until it is fixed.
          if (skill.status === 'invalid') {
            return (
              <li key={`${skill.file}:${skill.id}`} className="skill skill-invalid" data-testid={`skill-invalid-${skill.id}`}>
                <div className="skill-main">
                  <div className="skill-name">
                    <strong>{skill.name || skill.id}</strong> <code className="chip">{skill.file}</code> <span className="badge badge-fail">{t('skills.invalid')}</span>
                  </div>
                  <p className="muted small">{t('skills.invalidHint')}</p>
                  <ul className="small skill-problems">
                    {skill.problems.map((problem) => (
                      <li key={problem}>
                        <code>{problem}</code>
                      </li>
                    ))}
                  </ul>
                </div>
              </li>
            );
          }
          return (
            <li key={skill.id} className="skill" data-testid={`skill-${skill.id}`}>
              <div className="skill-main">
                <div className="skill-name">
                  <strong>{skill.name}</strong> <code className="chip">{skill.id}</code>
                  <span className="tag">{t('skills.nodes', { count: skill.nodes })}</span>
                </div>
                {skill.description ? <p className="muted small skill-description">{skill.description}</p> : null}
                <div className="skill-schedule small" data-testid="skill-schedule">
                  <span className="muted">{t('skills.schedule')}</span>{' '}
                  {skill.schedule ? (
                    <>
                      <code>{skill.schedule}</code> <span className="muted">UTC</span>
                      {skill.nextRun ? (
                        <span className="skill-next" data-testid="skill-next-run">
                          {' · '}
                          {t('skills.nextRun', { time: format.dateTime(skill.nextRun), relative: format.relative(skill.nextRun) })}
                        </span>
                      ) : null}
                    </>
                  ) : (
                    <span className="muted">{t('skills.manualOnly')}</span>
                  )}
                </div>
                {!isForProject ? (
                  <p className="muted small">{t('skills.notForProject', { projects: (skill.projects ?? []).join(', ') })}</p>
                ) : null}
              </div>
              {mayRun ? (
                <button
                  type="button"
                  className="button button-primary"
                  data-testid={`skill-run-${skill.id}`}
                  disabled={!isForProject || startingSkillId !== null}
                  onClick={() => void start(projectId, skill.id)}
                >
                  {isStarting ? t('skills.starting') : t('skills.run')}
                </button>
              ) : null}
            </li>
          );
        })}
      </ul>
    </>
  );
}
