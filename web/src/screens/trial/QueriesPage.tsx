import { useEffect, useState } from 'react';
import type { QueryFilters, QuerySeverity, QueryStatus, TrialProject } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { QUERY_CLOSER_ROLES, useRoleIn, WRITER_ROLES } from '../../stores/project-role';
import { useTrialQueriesStore } from '../../stores/trial-queries';
import { pageRows } from '../../stores/query-paging';
import { BulkCloseBar } from './BulkCloseBar';
import { enumLabel } from './labels';
import { QueryPager } from './QueryPager';
import { QueryTable } from './QueryTable';
import { ReportSummary } from './ReportSummary';

const STATUSES: QueryStatus[] = ['held', 'open', 'reopened', 'answered', 'closed', 'cancelled'];
const SEVERITIES: QuerySeverity[] = ['error', 'warning', 'info'];
/** Typing a record id filters after a short pause, not on every keystroke. */
const RECORD_FILTER_DELAY_MS = 350;

export function QueriesPage({ project }: { project: TrialProject }) {
  const t = useT();
  const projectId = project.id;
  const { queries, report, hasLoaded, isLoading, error, filters, paging, total, counts, transitionError, load, setFilters } = useTrialQueriesStore();
  const isCurrent = useTrialQueriesStore((state) => state.projectId === projectId);
  const activeFilters = isCurrent ? filters : {};
  const [recordText, setRecordText] = useState(activeFilters.recordId ?? '');
  // What this page offers follows the role in the trial: a viewer reads, the site answers, data management closes.
  const role = useRoleIn(projectId) ?? 'viewer';
  const mayChangeData = WRITER_ROLES.has(role);
  const mayClose = QUERY_CLOSER_ROLES.has(role);

  useEffect(() => {
    void load(projectId);
  }, [load, projectId]);

  useEffect(() => {
    const wanted = recordText.trim();
    if (wanted === (useTrialQueriesStore.getState().filters.recordId ?? '')) return;
    const timer = setTimeout(() => void setFilters(projectId, { ...useTrialQueriesStore.getState().filters, recordId: wanted }), RECORD_FILTER_DELAY_MS);
    return () => clearTimeout(timer);
  }, [recordText, projectId, setFilters]);

  function change(patch: QueryFilters): void {
    void setFilters(projectId, { ...activeFilters, ...patch });
  }

  const sites = project.sites.map((site) => site.site).filter(Boolean);
  const fields = (isCurrent ? report?.byField ?? [] : []).map((row) => row.key);
  const rules = (isCurrent ? report?.byRule ?? [] : []).map((row) => row.key).sort();
  const hasFilters = Object.keys(activeFilters).length > 0;

  return (
    <>
      {isCurrent && report ? <ReportSummary projectId={projectId} report={report} /> : null}

      <section className="panel section" aria-labelledby="queries-title">
        <div className="section-head">
          <div>
            <h2 id="queries-title">{t('queries.title')}</h2>
            <p className="muted small">{t('queries.intro')}</p>
          </div>
          <button type="button" className="button button-small" onClick={() => void load(projectId)} disabled={isLoading}>
            {t('common.refresh')}
          </button>
        </div>

        {/* The counts are for the other filters, so every status shows how many a click on it would list. */}
        <div className="segmented status-chips" role="group" aria-label={t('queries.byStatus')} data-testid="query-status-chips">
          <button type="button" className={`button button-small ${activeFilters.status ? '' : 'active'}`} aria-pressed={!activeFilters.status} data-testid="query-status-chip-all" onClick={() => change({ status: undefined })}>
            {t('queries.chip.all')} <span className="chip-count">{isCurrent ? STATUSES.reduce((sum, status) => sum + (counts[status] ?? 0), 0) : 0}</span>
          </button>
          {STATUSES.map((status) => (
            <button
              key={status}
              type="button"
              className={`button button-small ${activeFilters.status === status ? 'active' : ''}`}
              aria-pressed={activeFilters.status === status}
              data-testid={`query-status-chip-${status}`}
              onClick={() => change({ status })}
            >
              {enumLabel(t, 'query.status', status)} <span className="chip-count">{isCurrent ? counts[status] ?? 0 : 0}</span>
            </button>
          ))}
        </div>

        <div className="filter-bar" role="group" aria-label={t('queries.filters')}>
          <label className="filter">
            <span>{t('queries.filter.site')}</span>
            <select data-testid="query-filter-site" value={activeFilters.site ?? ''} onChange={(e) => change({ site: e.target.value || undefined })}>
              <option value="">{t('queries.filter.all')}</option>
              {sites.map((site) => (
                <option key={site} value={site}>
                  {site}
                </option>
              ))}
            </select>
          </label>
          <label className="filter">
            <span>{t('queries.filter.field')}</span>
            <select data-testid="query-filter-field" value={activeFilters.field ?? ''} onChange={(e) => change({ field: e.target.value || undefined })}>
              <option value="">{t('queries.filter.all')}</option>
              {fields.map((field) => (
                <option key={field} value={field}>
                  {field}
                </option>
              ))}
            </select>
          </label>
          <label className="filter">
            <span>{t('queries.filter.rule')}</span>
            <select data-testid="query-filter-rule" value={activeFilters.ruleId ?? ''} onChange={(e) => change({ ruleId: e.target.value || undefined })}>
              <option value="">{t('queries.filter.all')}</option>
              {(activeFilters.ruleId && !rules.includes(activeFilters.ruleId) ? [activeFilters.ruleId, ...rules] : rules).map((rule) => (
                <option key={rule} value={rule}>
                  {rule}
                </option>
              ))}
            </select>
          </label>
          <label className="filter">
            <span>{t('queries.filter.severity')}</span>
            <select data-testid="query-filter-severity" value={activeFilters.severity ?? ''} onChange={(e) => change({ severity: (e.target.value || undefined) as QuerySeverity | undefined })}>
              <option value="">{t('queries.filter.all')}</option>
              {SEVERITIES.map((severity) => (
                <option key={severity} value={severity}>
                  {enumLabel(t, 'severity', severity)}
                </option>
              ))}
            </select>
          </label>
          <label className="filter">
            <span>{t('queries.filter.record')}</span>
            <input
              type="search"
              data-testid="query-filter-record"
              placeholder={t('queries.filter.recordPlaceholder')}
              value={recordText}
              onChange={(e) => setRecordText(e.target.value)}
            />
          </label>
          {hasFilters ? (
            <button
              type="button"
              className="button button-small button-ghost filter-clear"
              onClick={() => {
                setRecordText('');
                void setFilters(projectId, {});
              }}
            >
              {t('queries.filter.clear')}
            </button>
          ) : null}
        </div>

        {error ? <ErrorAlert error={error} /> : null}
        {transitionError ? <ErrorAlert error={transitionError} title={t('queries.transitionFailed')} testId="query-transition-error" /> : null}
        {!isCurrent || (!hasLoaded && isLoading) ? <Spinner label={t('common.loading')} /> : null}
        {isCurrent && hasLoaded ? (
          <p className="muted small table-caption" data-testid="query-count">
            {t('queries.rows', { ...pageRows(paging.page, paging.pageSize, total), total })}
            {isLoading ? <Spinner /> : null}
          </p>
        ) : null}
        {isCurrent ? <BulkCloseBar projectId={projectId} /> : null}
        {isCurrent && hasLoaded && total === 0 ? (
          <p className="empty">{hasFilters ? t('queries.empty') : t('queries.emptyProject')}</p>
        ) : null}
        {isCurrent && queries.length > 0 ? <QueryTable projectId={projectId} queries={queries} isInteractive mayChangeData={mayChangeData} maySelect={mayClose} /> : null}
        {isCurrent && hasLoaded && total > 0 ? <QueryPager projectId={projectId} /> : null}
      </section>
    </>
  );
}
