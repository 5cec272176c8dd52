import { useEffect, useMemo, useState } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useApiDocsStore } from '../../stores/api-docs';
import { listOperations, matchesFilter } from './list-operations';
import { OperationCard } from './OperationCard';

/** The document needs the bearer token, so it is offered as a Blob download rather than a plain link. */
function download(document: unknown): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: 'application/json' }));
  const anchor = window.document.createElement('a');
  anchor.href = url;
  anchor.download = 'openapi.json';
  anchor.click();
  URL.revokeObjectURL(url);
}

export function ApiDocsScreen() {
  const t = useT();
  const { document, isLoading, error, load } = useApiDocsStore();
  const [filter, setFilter] = useState('');

  useEffect(() => {
    if (!document) void load();
  }, [document, load]);

  const groups = useMemo(() => (document ? listOperations(document) : []), [document]);
  const visible = groups
    .map((group) => ({ ...group, operations: group.operations.filter((entry) => matchesFilter(entry, filter)) }))
    .filter((group) => group.operations.length > 0);

  return (
    <main className="page">
      <div className="page-head">
        <div>
          <h1>{document?.info?.title ?? t('apiDocs.title')}</h1>
          <p className="muted">
            {document?.info?.version ? `${t('apiDocs.version', { version: document.info.version })} · ` : ''}
            {t('apiDocs.intro')}
          </p>
        </div>
        <div className="page-actions">
          <input
            className="filter-input"
            type="search"
            placeholder={t('apiDocs.filter')}
            aria-label={t('apiDocs.filter')}
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
          />
          {document ? (
            <button type="button" className="button" onClick={() => download(document)}>
              {t('apiDocs.download')}
            </button>
          ) : null}
        </div>
      </div>
      {error ? (
        <ErrorAlert
          error={error}
          action={
            <button type="button" className="button" onClick={() => void load()}>
              {t('common.retry')}
            </button>
          }
        />
      ) : null}
      {isLoading ? <Spinner label={t('common.loading')} /> : null}
      {document && groups.length === 0 ? <p className="empty">{t('apiDocs.empty')}</p> : null}
      {visible.map((group) => (
        <section className="tag-group" key={group.tag ?? ''}>
          <h2>
            {group.tag ?? t('apiDocs.untagged')}
            {group.description ? <span className="muted small"> — {group.description}</span> : null}
          </h2>
          {group.operations.map((entry) => (
            <OperationCard key={`${entry.method} ${entry.path}`} entry={entry} document={document ?? {}} />
          ))}
        </section>
      ))}
    </main>
  );
}
