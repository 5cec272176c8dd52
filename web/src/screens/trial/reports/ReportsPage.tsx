import { useEffect, useState, type FormEvent } from 'react';
import type { MemoryReport } from '../../../api';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Spinner } from '../../../components/Spinner';
import { useFormat } from '../../../i18n/use-format';
import { useT } from '../../../i18n/use-t';
import { useMemoryReportsStore } from '../../../stores/memory-reports';
import { useRoleIn, WRITER_ROLES } from '../../../stores/project-role';
import { RuleYieldTable } from './RuleYieldTable';
import { aWeekAgo, mondayOf, thisWeekStart, weekStartOf } from './week';

function ReportRow({ report, canWrite, isRegenerating, onRegenerate }: { report: MemoryReport; canWrite: boolean; isRegenerating: boolean; onRegenerate(weekStart: string): void }) {
  const t = useT();
  const format = useFormat();
  const weekStart = report.kind === 'week' ? weekStartOf(report.periodStart) : null;
  return (
    <tr data-testid="report-row" data-kind={report.kind} data-label={report.label}>
      <td className="nowrap">
        <strong>{report.label}</strong> <span className={`badge ${report.kind === 'week' ? 'badge-info' : 'badge-neutral'}`}>{t(`reports.kind.${report.kind}`)}</span>
        {weekStart ? <div className="muted small">{t('reports.weekOf', { date: weekStart })}</div> : null}
        {report.partial ? (
          <div>
            <span className="badge badge-warn" data-testid="report-partial">
              {t('reports.partial', { date: format.dateTime(report.periodEnd) })}
            </span>
          </div>
        ) : null}
      </td>
      <td className="report-summary" data-testid="report-summary">
        {report.summary}
      </td>
      <td className="num">
        {report.tokens}
        <div className="muted small">{t('reports.sources', { count: report.sourceCount })}</div>
      </td>
      <td className="nowrap">
        {format.dateTime(report.updatedAt)}
        <div className="muted small">{t('reports.by', { actor: report.generatedBy })}</div>
      </td>
      {canWrite ? (
        <td className="nowrap">
          {weekStart ? (
            <button type="button" className="button button-small" data-testid="report-regenerate" disabled={isRegenerating} onClick={() => onRegenerate(weekStart)}>
              {isRegenerating ? t('reports.regenerating') : t('reports.regenerate')}
            </button>
          ) : null}
        </td>
      ) : null}
    </tr>
  );
}

/** Weekly reports (and yearly roll-ups) distilled from the project's conversations, writers can rewrite a week; then rule yield. */
export function ReportsPage({ projectId }: { projectId: string }) {
  const t = useT();
  const canWrite = WRITER_ROLES.has(useRoleIn(projectId) ?? 'viewer');
  const { reports, hasLoaded, isLoading, error, regenerating, regenerateError, regenerateNotice, load, regenerate } = useMemoryReportsStore();
  const isCurrent = useMemoryReportsStore((state) => state.projectId === projectId);
  const [date, setDate] = useState(aWeekAgo);
  const weekStart = mondayOf(date);
  const currentWeek = thisWeekStart();

  useEffect(() => {
    void load(projectId);
  }, [load, projectId]);

  function generate(event: FormEvent) {
    event.preventDefault();
    if (weekStart) void regenerate(projectId, weekStart);
  }

  return (
    <>
      <section className="panel section" aria-labelledby="reports-title" data-testid="reports-page">
        <div className="section-head">
          <div>
            <h2 id="reports-title">{t('reports.title')}</h2>
            <p className="muted small">{t('reports.intro')}</p>
          </div>
          <button type="button" className="button button-small" onClick={() => void load(projectId)} disabled={isLoading}>
            {t('common.refresh')}
          </button>
        </div>

        {canWrite ? (
          <form className="filter-bar" onSubmit={generate}>
            <label className="filter">
              {t('reports.generateWeek')}
              <input type="date" data-testid="report-week-date" value={date} onChange={(event) => setDate(event.target.value)} />
            </label>
            {weekStart ? <span className="muted small">{t('reports.weekOf', { date: weekStart })}</span> : null}
            <button type="submit" className="button button-small" data-testid="report-generate" disabled={!weekStart || Boolean(weekStart && regenerating[weekStart])}>
              {weekStart && regenerating[weekStart] ? t('reports.regenerating') : t('reports.generate')}
            </button>
            <button
              type="button"
              className="button button-small"
              data-testid="report-this-week"
              title={t('reports.thisWeekHint')}
              disabled={Boolean(regenerating[currentWeek])}
              onClick={() => void regenerate(projectId, currentWeek)}
            >
              {regenerating[currentWeek] ? t('reports.regenerating') : t('reports.thisWeek')}
            </button>
          </form>
        ) : null}

        {error ? <ErrorAlert error={error} /> : null}
        {regenerateNotice ? (
          <div className="alert" role="status" data-testid="report-regenerate-notice" data-week={regenerateNotice.weekStart}>
            <strong className="alert-title">{t('reports.regenerateFailed')}</strong>
            <p className="small">{regenerateNotice.notice}</p>
          </div>
        ) : null}
        {regenerateError ? <ErrorAlert error={regenerateError.error} title={t('reports.regenerateFailed')} testId="report-regenerate-error" /> : null}
        {!isCurrent || (!hasLoaded && isLoading) ? <Spinner label={t('common.loading')} /> : null}
        {isCurrent && hasLoaded && !error && reports.length === 0 ? <p className="empty">{t('reports.empty')}</p> : null}
        {isCurrent && reports.length > 0 ? (
          <div className="table-scroll">
            <table className="table reports-table">
              <thead>
                <tr>
                  <th>{t('reports.col.period')}</th>
                  <th>{t('reports.col.summary')}</th>
                  <th className="num">{t('reports.col.tokens')}</th>
                  <th>{t('reports.col.generated')}</th>
                  {canWrite ? <th /> : null}
                </tr>
              </thead>
              <tbody>
                {reports.map((report) => {
                  const start = report.kind === 'week' ? weekStartOf(report.periodStart) : null;
                  return (
                    <ReportRow
                      key={report.id}
                      report={report}
                      canWrite={canWrite}
                      isRegenerating={Boolean(start && regenerating[start])}
                      onRegenerate={(week) => void regenerate(projectId, week)}
                    />
                  );
                })}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      <RuleYieldTable projectId={projectId} />
    </>
  );
}
