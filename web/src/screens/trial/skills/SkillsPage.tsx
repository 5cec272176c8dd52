import type { QcSkill } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import { useRoleIn, WRITER_ROLES } from '../../../stores/project-role';
import { skillsOfTrial, useTrialCatalogStore } from '../../../stores/trial-catalog';
import { RedcapRuleImport } from './RedcapRuleImport';
import { SkillEditorPanel } from './SkillEditorPanel';
import './skills.css';

/** The Skills tab: the skills of this trial (active, draft, invalid) and the one open in the editor. */
export function SkillsPage({ projectId, skillId }: { projectId: string; skillId: string | null }) {
  const t = useT();
  const role = useRoleIn(projectId) ?? 'viewer';
  const skills = skillsOfTrial(useTrialCatalogStore((state) => state.skills), projectId);
  const isWriter = WRITER_ROLES.has(role);
  const open = skillId ? skills.find((s) => s.id === skillId) : undefined;
  // A skill for every project is platform configuration: only admins change it.
  const canEdit = role === 'admin' || (isWriter && (skillId === null || (open !== undefined && open.projects !== null)));

  return (
    <section className="panel" data-testid="skills-page">
      <h2>{t('skillEditor.title')}</h2>
      <p className="muted">{t('skillEditor.intro')}</p>
      <div className="skills-layout">
        <nav>
          {isWriter ? (
            <a className="button button-small" href={routes.trialSkills(projectId)} data-testid="skill-new">
              {t('skillEditor.new')}
            </a>
          ) : null}
          {skills.length === 0 ? <p className="empty">{t('skillEditor.none')}</p> : null}
          <ul className="skills-index">
            {skills.map((skill) => (
              <li key={`${skill.status}:${skill.file}:${skill.id}`}>
                <a href={routes.trialSkill(projectId, skill.id)} className={skill.id === skillId ? 'active' : ''} data-testid={`skill-item-${skill.id}`} data-status={skill.status}>
                  <strong>{skill.name || skill.id}</strong>
                  <br />
                  <SkillStatus skill={skill} />
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {skillId !== null || isWriter ? (
          <div>
            {/* A new skill may start from a site's REDCap Data Quality rules. */}
            {skillId === null && isWriter ? <RedcapRuleImport projectId={projectId} /> : null}
            <SkillEditorPanel projectId={projectId} skillId={skillId} canEdit={canEdit} canTry={isWriter} />
          </div>
        ) : null}
      </div>
    </section>
  );
}

function SkillStatus({ skill }: { skill: QcSkill }) {
  const t = useT();
  if (skill.status === 'invalid') return <span className="badge badge-fail">{t('skillEditor.status.invalid')}</span>;
  if (skill.status === 'draft') return <span className="badge">{t('skillEditor.status.draft', { version: skill.draftVersion ?? 1 })}</span>;
  return (
    <span className="small muted">
      <span className="badge badge-ok">{t('skillEditor.status.active', { version: skill.version ?? 1 })}</span>
      {skill.draftVersion ? ` ${t('skillEditor.draftPending', { version: skill.draftVersion })}` : ''}
      {skill.updatedBy ? ` · ${t('skillEditor.updated', { version: skill.version ?? 1, actor: skill.updatedBy })}` : ''}
    </span>
  );
}
