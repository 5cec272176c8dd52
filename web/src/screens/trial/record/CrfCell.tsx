import { useState } from 'react';
import type { CrfField, CrfValue, DataQuery } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { QueryStatusBadge } from '../TrialBadges';
import { displayValue, FOLD_AFTER_CHARS, isLiveQuery } from './crf-cells';

/** Scrolls the record's query table to a query's row and marks it, since queries have no page of their own. */
function showQuery(queryId: string): void {
  const row = document.querySelector<HTMLElement>(`[data-testid="query-row"][data-query-id="${CSS.escape(queryId)}"]`);
  if (!row) return;
  row.scrollIntoView({ behavior: 'smooth', block: 'center' });
  row.classList.add('row-highlight');
  window.setTimeout(() => row.classList.remove('row-highlight'), 2000);
}

/** Long text folded after FOLD_AFTER_CHARS characters, with a toggle; short text as it is. */
function FoldedText({ text }: { text: string }) {
  const t = useT();
  const [isOpen, setOpen] = useState(false);
  if (text.length <= FOLD_AFTER_CHARS) return <span className="crf-text">{text}</span>;
  return (
    <span className="crf-text" data-testid="crf-folded">
      {isOpen ? text : `${text.slice(0, FOLD_AFTER_CHARS).trimEnd()}…`}{' '}
      <button type="button" className="link-button small" data-testid="crf-fold-toggle" aria-expanded={isOpen} onClick={() => setOpen(!isOpen)}>
        {isOpen ? t('crf.showLess') : t('crf.showMore')}
      </button>
    </span>
  );
}

/**
 * One value of the CRF: shown as its label, masked if it is an identifier the reader may not see, and flagged with
 * its queries (message, status, a link to the query's row) while any of them is still live.
 */
export function CrfCell({ field, eventName, value, isMasked, queries }: { field: CrfField; eventName: string; value: CrfValue | undefined; isMasked: boolean; queries: DataQuery[] }) {
  const t = useT();
  const labels = { yes: t('crf.yes'), no: t('crf.no'), true: t('crf.true'), false: t('crf.false') };
  const text = displayValue(field, value, labels);
  const isFlagged = queries.some(isLiveQuery);
  const content = isMasked ? (
    <span className="muted" title={t('record.masked')} aria-label={t('record.masked')} data-testid="record-masked-value">
      ••••
    </span>
  ) : text === '' ? (
    <span className="muted">—</span>
  ) : (
    <FoldedText text={text} />
  );

  return (
    <td
      className={`crf-cell ${isFlagged ? 'cell-flagged' : ''}`}
      data-testid={isFlagged ? 'crf-cell-flagged' : 'crf-cell'}
      data-field={field.name}
      data-event={eventName}
      title={isFlagged ? `${t('record.hasQuery')}: ${queries.filter(isLiveQuery).map((q) => q.message).join('; ')}` : undefined}
    >
      {content}
      {queries.length ? (
        <ul className="crf-queries" data-testid="crf-cell-queries">
          {queries.map((query) => (
            <li key={query.id} className={isLiveQuery(query) ? undefined : 'muted'} data-testid="crf-cell-query" data-query-id={query.id}>
              <QueryStatusBadge status={query.status} />{' '}
              <button type="button" className="link-button" onClick={() => showQuery(query.id)} title={t('crf.goToQuery')}>
                {query.message}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </td>
  );
}
