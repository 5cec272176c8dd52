import type { TrialProject } from '../../api';
import { useT } from '../../i18n/use-t';
import { trialPageIn, type TrialPage } from '../../router';

/** Switches project and keeps the list page the user is on (QC runs, queries or review queue). */
export function ProjectPicker({ projects, projectId, page }: { projects: TrialProject[]; projectId: string; page: TrialPage }) {
  const t = useT();
  const isKnown = projects.some((project) => project.id === projectId);
  return (
    <label className="project-picker">
      <span className="muted small">{t('trial.project')}</span>
      <select
        data-testid="trial-project-select"
        value={projectId}
        onChange={(event) => {
          window.location.hash = trialPageIn(event.target.value, page);
        }}
      >
        {isKnown ? null : <option value={projectId}>{projectId}</option>}
        {projects.map((project) => (
          <option key={project.id} value={project.id}>
            {project.name === project.id ? project.id : `${project.name} (${project.id})`}
          </option>
        ))}
      </select>
    </label>
  );
}
