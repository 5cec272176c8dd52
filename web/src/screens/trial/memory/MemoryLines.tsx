import type { HotMemoryLine } from '../../../api';
import { useFormat } from '../../../i18n/use-format';
import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import { lineSourceLabel, linesBySection } from './line-source';

/** One line with where it came from, who added it and when; a record source links to the record. */
export function MemoryLineItem({ projectId, line }: { projectId: string; line: HotMemoryLine }) {
  const t = useT();
  const format = useFormat();
  const source = lineSourceLabel(t, line.source);
  return (
    <li className="memory-line" data-testid="memory-line" data-section={line.section} data-source-kind={line.source.kind}>
      <div className="memory-line-text">{line.text}</div>
      <div className="muted small memory-line-meta">
        <span className="tag memory-source" title={`${line.source.kind}: ${line.source.ref}`} data-testid="memory-line-source">
          {line.source.kind === 'record' ? <a href={routes.trialRecord(projectId, line.source.ref)}>{source}</a> : source}
        </span>{' '}
        <span title={format.dateTime(line.addedAt)}>
          {/* A line someone wrote themselves already names them in its source. */}
          {line.source.kind === 'user' && line.source.ref === line.addedBy ? format.relative(line.addedAt) : t('memory.lineMeta', { actor: line.addedBy, time: format.relative(line.addedAt) })}
        </span>
      </div>
    </li>
  );
}

/** The memory as lists per section, each line with its source. */
export function MemoryLines({ projectId, lines }: { projectId: string; lines: HotMemoryLine[] }) {
  const t = useT();
  if (lines.length === 0) return <p className="empty">{t('memory.empty')}</p>;
  return (
    <div className="memory-sections">
      {linesBySection(lines).map(({ section, lines: sectionLines }) => (
        <section key={section} className="memory-section" data-testid={`memory-section-${section}`}>
          <h3>{t(`memory.section.${section}`)}</h3>
          {sectionLines.length === 0 ? (
            <p className="muted small">{t('memory.sectionEmpty')}</p>
          ) : (
            <ul className="memory-line-list">
              {sectionLines.map((line, index) => (
                <MemoryLineItem key={index} projectId={projectId} line={line} />
              ))}
            </ul>
          )}
        </section>
      ))}
    </div>
  );
}
