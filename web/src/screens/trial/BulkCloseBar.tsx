import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useT } from '../../i18n/use-t';
import { QUERY_CLOSER_ROLES, useRoleIn } from '../../stores/project-role';
import { useTrialQueriesStore } from '../../stores/trial-queries';
import { enumLabel } from './labels';

/** The ticked queries: how many, clear them, or close them all with one reason (asked once, audited on each). */
export function BulkCloseBar({ projectId }: { projectId: string }) {
  const t = useT();
  const selected = useTrialQueriesStore((state) => state.selected);
  const isBulkClosing = useTrialQueriesStore((state) => state.isBulkClosing);
  const result = useTrialQueriesStore((state) => state.bulkCloseResult);
  const error = useTrialQueriesStore((state) => state.bulkCloseError);
  const select = useTrialQueriesStore((state) => state.select);
  const bulkClose = useTrialQueriesStore((state) => state.bulkClose);
  const [isAsking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  const count = selected.length;
  const canSubmit = !isBulkClosing && count > 0 && reason.trim() !== '';
  // Closing is data management's (data manager, PI, admin); the site answers queries one by one.
  const mayClose = QUERY_CLOSER_ROLES.has(useRoleIn(projectId) ?? 'viewer');

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!canSubmit) return;
    if (await bulkClose(projectId, reason)) {
      setAsking(false);
      setReason('');
    }
  }

  if (!mayClose) return null;
  return (
    <>
      {count > 0 ? (
        <div className="bulk-bar" data-testid="query-bulk-bar">
          <span className="small" data-testid="query-selected-count">
            {t('queries.selected', { count })}
          </span>
          <button type="button" className="button button-small button-ghost" onClick={() => select(selected, false)} disabled={isBulkClosing}>
            {t('queries.clearSelection')}
          </button>
          <button type="button" className="button button-small button-primary" data-testid="query-bulk-close" onClick={() => setAsking(true)} disabled={isAsking}>
            {t('queries.bulk.close')}
          </button>
        </div>
      ) : null}
      {count > 0 && isAsking ? (
        <form className="inline-form bulk-form" onSubmit={(event) => void submit(event)} data-testid="query-bulk-form">
          <label htmlFor="query-bulk-reason" className="inline-form-label">
            {t('queries.bulk.title', { count })}
          </label>
          <textarea
            id="query-bulk-reason"
            data-testid="query-bulk-reason"
            rows={2}
            maxLength={500}
            autoFocus
            placeholder={t('queries.bulk.reason')}
            value={reason}
            onChange={(event) => setReason(event.target.value)}
          />
          <div className="inline-form-actions">
            <button type="submit" className="button button-primary button-small" data-testid="query-bulk-confirm" disabled={!canSubmit}>
              {isBulkClosing ? t('common.saving') : t('queries.bulk.confirm', { count })}
            </button>
            <button type="button" className="button button-small" onClick={() => setAsking(false)} disabled={isBulkClosing}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      ) : null}
      {error ? <ErrorAlert error={error} title={t('queries.bulk.failed')} testId="query-bulk-error" /> : null}
      {result ? (
        <div className="alert alert-info" role="status" data-testid="query-bulk-result">
          <span className="alert-text">
            {t('queries.bulk.closed', { closed: result.closed })}
            {result.skipped.length > 0 ? (
              <>
                {' '}
                {t('queries.bulk.skipped', { count: result.skipped.length })}
                <ul className="small">
                  {result.skipped.map((skip) => (
                    <li key={skip.id} data-testid="query-bulk-skipped" data-record-id={skip.recordId ?? ''}>
                      {/* The record and field, as the data manager finds the query again; never its id. */}
                      {skip.recordId ? <strong>{skip.recordId}</strong> : t('queries.bulk.skippedNotFound')} {skip.field ? <code>{skip.eventName ? `${skip.eventName}.${skip.field}` : skip.field}</code> : null}{' '}
                      {skip.status ? `(${enumLabel(t, 'query.status', skip.status)}) ` : ''}
                      {skip.why}
                    </li>
                  ))}
                </ul>
              </>
            ) : null}
          </span>
        </div>
      ) : null}
    </>
  );
}
