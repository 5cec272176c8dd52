import type { ReportCount, ViolationsReport } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import type { MessageKey } from '../../i18n/en';
import { useT } from '../../i18n/use-t';
import { useTrialQueriesStore } from '../../stores/trial-queries';
import { enumLabel, siteLabel } from './labels';

/** Rows shown per breakdown; the downloads hold every row. */
const TOP_ROWS = 6;

function Breakdown({ title, counts, total, label }: { title: string; counts: ReportCount[]; total: number; label?: (key: string) => string }) {
  const t = useT();
  return (
    <div className="breakdown" data-testid="report-breakdown">
      <h3>{title}</h3>
      {counts.length === 0 ? (
        <p className="muted small">{t('common.none')}</p>
      ) : (
        <ul className="breakdown-list">
          {counts.slice(0, TOP_ROWS).map((row) => (
            <li key={row.key}>
              <span className="breakdown-key" title={row.key}>
                {label ? label(row.key) : row.key}
              </span>
              <span className="breakdown-bar" aria-hidden="true">
                <span style={{ width: `${total > 0 ? (row.count / total) * 100 : 0}%` }} />
              </span>
              <span className="breakdown-count">{row.count}</span>
            </li>
          ))}
          {counts.length > TOP_ROWS ? <li className="muted small">{t('report.more', { count: counts.length - TOP_ROWS })}</li> : null}
        </ul>
      )}
    </div>
  );
}

/** Violations of the whole project by field, rule, site and severity, with the CSV and Excel downloads. */
export function ReportSummary({ projectId, report }: { projectId: string; report: ViolationsReport }) {
  const t = useT();
  const downloading = useTrialQueriesStore((state) => state.downloading);
  const downloadError = useTrialQueriesStore((state) => state.downloadError);
  const download = useTrialQueriesStore((state) => state.download);
  const formats: Array<['csv' | 'xlsx', MessageKey]> = [
    ['csv', 'report.downloadCsv'],
    ['xlsx', 'report.downloadXlsx'],
  ];

  return (
    <section className="panel section" aria-labelledby="report-title" data-testid="report-summary">
      <div className="section-head">
        <div>
          <h2 id="report-title">{t('report.title')}</h2>
          <p className="muted small" data-testid="report-total">
            {t('report.total', { count: report.total })}
            {report.byStatus.map((row) => (
              <span key={row.key} className="status-count">
                {' · '}
                {enumLabel(t, 'query.status', row.key)} {row.count}
              </span>
            ))}
          </p>
        </div>
        <div className="page-actions">
          {formats.map(([format, key]) => (
            <button
              key={format}
              type="button"
              className="button button-small"
              data-testid={`report-download-${format}`}
              disabled={downloading !== null}
              onClick={() => void download(projectId, format)}
            >
              {downloading === format ? t('report.downloading') : t(key)}
            </button>
          ))}
        </div>
      </div>
      {downloadError ? <ErrorAlert error={downloadError} title={t('report.downloadFailed')} /> : null}
      <div className="breakdown-grid">
        <Breakdown title={t('report.byField')} counts={report.byField} total={report.total} />
        <Breakdown title={t('report.byRule')} counts={report.byRule} total={report.total} />
        <Breakdown title={t('report.bySite')} counts={report.bySite} total={report.total} label={(key) => siteLabel(t, key)} />
        <Breakdown
          title={t('report.bySeverity')}
          counts={report.bySeverity}
          total={report.total}
          label={(key) => enumLabel(t, 'severity', key)}
        />
      </div>
    </section>
  );
}
