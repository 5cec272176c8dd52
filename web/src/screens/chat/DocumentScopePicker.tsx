import type { ScenarioDocument } from '../../api';
import { useT } from '../../i18n/use-t';

interface DocumentScopePickerProps {
  documents: ScenarioDocument[];
  excludedDocumentIds: string[];
  onChange(excludedDocumentIds: string[]): void;
  disabled?: boolean;
}

/** Ticked documents are the retrieval scope of the next run; all ticked means no filter is sent. */
export function DocumentScopePicker({ documents, excludedDocumentIds, onChange, disabled }: DocumentScopePickerProps) {
  const t = useT();
  const excluded = new Set(excludedDocumentIds);
  const selectedCount = documents.filter((doc) => !excluded.has(doc.documentId)).length;

  function toggle(documentId: string, isChecked: boolean) {
    const next = new Set(excluded);
    if (isChecked) next.delete(documentId);
    else next.add(documentId);
    onChange([...next]);
  }

  return (
    <section className="panel scope-picker" data-testid="document-scope">
      <h2 className="panel-title">{t('chat.scope')}</h2>
      {documents.length === 0 ? (
        <p className="muted small">{t('chat.noDocuments')}</p>
      ) : (
        <>
          <p className="small">
            {selectedCount === documents.length
              ? t('chat.scopeAll')
              : t('chat.scopeSome', { selected: selectedCount, total: documents.length })}
          </p>
          <ul className="scope-list">
            {documents.map((doc) => (
              <li key={doc.documentId}>
                <label className="checkbox-row" data-testid="scope-document">
                  <input
                    type="checkbox"
                    checked={!excluded.has(doc.documentId)}
                    disabled={disabled}
                    onChange={(event) => toggle(doc.documentId, event.target.checked)}
                  />
                  <span className="scope-file" title={doc.documentId}>
                    {doc.sourceFile}
                  </span>
                  <span className="muted small">{t('chat.chunks', { count: doc.chunkCount })}</span>
                </label>
              </li>
            ))}
          </ul>
          {selectedCount < documents.length ? (
            <button type="button" className="button button-small" disabled={disabled} onClick={() => onChange([])}>
              {t('chat.selectAll')}
            </button>
          ) : null}
          {selectedCount === 0 ? <p className="field-error small">{t('chat.scopeNone')}</p> : null}
        </>
      )}
    </section>
  );
}
