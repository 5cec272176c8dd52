import type { SkillVersionSummary } from '../../../api/skills-api';
import { useFormat } from '../../../i18n/use-format';
import { useT } from '../../../i18n/use-t';

/** Every version, newest first: status, who wrote it and why; View opens one read-only. */
export function SkillVersions({ versions, onView }: { versions: SkillVersionSummary[]; onView(version: number): void }) {
  const t = useT();
  const format = useFormat();
  if (!versions.length) return null;
  return (
    <section className="panel">
      <h3>{t('skillEditor.versions')}</h3>
      <ul className="skill-versions small" data-testid="skill-versions">
        {versions.map((v) => (
          <li key={v.version} data-testid={`skill-version-${v.version}`} data-status={v.status}>
            <strong>v{v.version}</strong>
            <span className={`badge ${v.status === 'active' ? 'badge-ok' : ''}`}>{t(`skillEditor.version.status.${v.status}`)}</span>
            <span className="muted">
              {v.createdBy} · <span title={format.dateTime(v.createdAt)}>{format.relative(v.createdAt)}</span>
              {v.comment ? ` · ${v.comment}` : ''}
            </span>
            <button type="button" className="button button-small" onClick={() => onView(v.version)}>
              {t('skillEditor.version.view')}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
