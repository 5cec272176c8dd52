import { useEffect, useState } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { recordKey, useTrialRecordStore } from '../../stores/trial-record';
import { AuditTrail } from './AuditTrail';
import { siteLabel } from './labels';
import { QueryTable } from './QueryTable';
import { RecordEventsTable } from './RecordEventsTable';
import { CrfView } from './record/CrfView';

export function RecordPage({ projectId, recordId }: { projectId: string; recordId: string }) {
  const t = useT();
  const entry = useTrialRecordStore((state) => state.entries[recordKey(projectId, recordId)]);
  const load = useTrialRecordStore((state) => state.load);
  // The CRF reads as the site entered the data; the raw rows (as stored, one column per stored row) stay a click away.
  const [isRaw, setRaw] = useState(false);

  useEffect(() => {
    void load(projectId, recordId);
  }, [load, projectId, recordId]);

  const head = (
    <div className="section-head">
      <div>
        <a className="back-link" href={routes.trialQueries(projectId)}>
          ← {t('record.backToQueries')}
        </a>
        <h2 data-testid="record-title">{t('record.title', { recordId })}</h2>
        {entry?.status === 'loaded' ? (
          <p className="muted small">
            {t('record.summary', {
              events: entry.record.events.length,
              sites: [...new Set(entry.record.events.map((event) => siteLabel(t, event.site)))].join(', '),
            })}
          </p>
        ) : null}
      </div>
      <button type="button" className="button button-small" onClick={() => void load(projectId, recordId)} disabled={entry?.status === 'loading'}>
        {t('common.refresh')}
      </button>
    </div>
  );

  if (!entry || entry.status === 'loading') return <section className="section">{head}<Spinner label={t('common.loading')} /></section>;
  if (entry.status === 'error') return <section className="section">{head}<ErrorAlert error={entry.error} /></section>;

  const { record } = entry;
  // Data without a dictionary (an old import) has no CRF: the raw rows are all there is.
  const showsCrf = Boolean(record.crf) && !isRaw;
  return (
    <div className="section">
      {head}
      <section className="panel section" aria-labelledby="record-events-title">
        <div className="section-head">
          <h3 id="record-events-title" className="panel-heading">{showsCrf ? t('crf.title') : t('record.events')}</h3>
          {record.crf ? (
            <button type="button" className="button button-small" data-testid="record-view-toggle" aria-pressed={isRaw} onClick={() => setRaw(!isRaw)}>
              {isRaw ? t('crf.showCrf') : t('crf.showRaw')}
            </button>
          ) : null}
        </div>
        {showsCrf && record.crf ? <CrfView crf={record.crf} queries={record.queries} /> : <RecordEventsTable events={record.events} queries={record.queries} />}
      </section>
      <section className="panel section" aria-labelledby="record-queries-title">
        <h3 id="record-queries-title" className="panel-heading">{t('record.queries', { count: record.queries.length })}</h3>
        {record.queries.length === 0 ? (
          <p className="muted small">{t('record.noQueries')}</p>
        ) : (
          <QueryTable projectId={projectId} queries={record.queries} showRecord={false} />
        )}
      </section>
      <section className="panel section" aria-labelledby="record-audit-title">
        <h3 id="record-audit-title" className="panel-heading">{t('record.audit')}</h3>
        <AuditTrail entries={record.audit} testId="record-audit-entry" />
      </section>
    </div>
  );
}
