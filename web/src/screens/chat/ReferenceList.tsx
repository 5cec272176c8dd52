import type { Reference } from '../../api';
import { useT } from '../../i18n/use-t';

export function ReferenceList({ references }: { references: Reference[] }) {
  const t = useT();
  if (references.length === 0) return <p className="muted small">{t('answer.noReferences')}</p>;
  return (
    <ol className="reference-list">
      {references.map((ref) => (
        <li className="reference" data-testid="reference" key={`${ref.chunkId}-${ref.chunkIndex}`}>
          <div className="reference-head">
            <span className="reference-file">{ref.sourceFile}</span>
            <span className="muted small">{t('answer.chunk', { chunkId: ref.chunkId, index: ref.chunkIndex })}</span>
            <span className="tag tag-score">{t('answer.score', { score: ref.score.toFixed(3) })}</span>
          </div>
          <details className="collapsible">
            <summary>{t('answer.showContent')}</summary>
            <blockquote className="reference-content">{ref.content}</blockquote>
          </details>
        </li>
      ))}
    </ol>
  );
}
