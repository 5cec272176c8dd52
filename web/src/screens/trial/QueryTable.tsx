import { useEffect, useState, type FormEvent } from 'react';
import type { DataQuery, QuerySortColumn, QueryTransition } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { formatValue } from '../../i18n/format';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useTrialQueriesStore } from '../../stores/trial-queries';
import { AuditTrail } from './AuditTrail';
import { siteLabel } from './labels';
import { needsComment, noLongerFiresKey, offeredMoves } from './query-lifecycle';
import { QueryStatusBadge, SeverityBadge } from './TrialBadges';

interface QueryTableProps {
  projectId: string;
  queries: DataQuery[];
  /** Off on the record page, where every row is the same record. */
  showRecord?: boolean;
  /**
   * Lifecycle buttons, history, row checkboxes and sortable headers; only the Queries page, which owns the query
   * store (its page, sort and selection), turns them on.
   */
  isInteractive?: boolean;
  /** The role in the trial may change its data: lifecycle buttons are offered (a viewer gets none). */
  mayChangeData?: boolean;
  /** The role may close queries: rows can be ticked for bulk close. */
  maySelect?: boolean;
}

export function QueryTable({ projectId, queries, showRecord = true, isInteractive = false, mayChangeData = false, maySelect = false }: QueryTableProps) {
  const t = useT();
  // Queries raised on a whole record carry no event; an empty column would only push the message aside.
  const showEvent = queries.some((query) => query.eventName);
  const canSelect = isInteractive && maySelect;
  const columnCount = 6 + (showRecord ? 1 : 0) + (showEvent ? 1 : 0) + (isInteractive ? 1 : 0) + (canSelect ? 1 : 0);
  const Header = isInteractive ? SortableHeader : PlainHeader;
  return (
    <div className="table-scroll">
      <table className="table query-table">
        <thead>
          <tr>
            {canSelect ? <SelectPageHeader queries={queries} /> : null}
            {showRecord ? <Header column="recordId" label={t('queries.col.record')} /> : null}
            {showEvent ? <Header column="eventName" label={t('queries.col.event')} /> : null}
            <Header column="site" label={t('queries.col.site')} />
            <Header column="field" label={t('queries.col.field')} />
            <th>{t('queries.col.message')}</th>
            <Header column="severity" label={t('queries.col.severity')} />
            <Header column="status" label={t('queries.col.status')} />
            <Header column="createdAt" label={t('queries.col.created')} />
            {isInteractive ? <th className="actions-col">{t('queries.col.actions')}</th> : null}
          </tr>
        </thead>
        <tbody>
          {queries.map((query) => (
            <QueryRow
              key={query.id}
              projectId={projectId}
              query={query}
              showRecord={showRecord}
              showEvent={showEvent}
              isInteractive={isInteractive}
              mayChangeData={mayChangeData}
              canSelect={canSelect}
              columnCount={columnCount}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PlainHeader({ label }: { column: QuerySortColumn; label: string }) {
  return <th>{label}</th>;
}

/** A header that sorts the server's list by its column; a second click reverses the order. */
function SortableHeader({ column, label }: { column: QuerySortColumn; label: string }) {
  const t = useT();
  const projectId = useTrialQueriesStore((state) => state.projectId);
  const paging = useTrialQueriesStore((state) => state.paging);
  const sortBy = useTrialQueriesStore((state) => state.sortBy);
  const isSorted = paging.sort === column;
  return (
    <th aria-sort={isSorted ? (paging.order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button
        type="button"
        className="sort-header"
        data-testid={`query-sort-${column}`}
        title={t('queries.sortBy', { column: label })}
        onClick={() => projectId && void sortBy(projectId, column)}
      >
        {label}
        <span aria-hidden="true" className={isSorted ? undefined : 'muted'}>
          {isSorted ? (paging.order === 'asc' ? ' ▲' : ' ▼') : ' ↕'}
        </span>
      </button>
    </th>
  );
}

/** Ticks or clears every row of the page shown; rows ticked on other pages stay ticked. */
function SelectPageHeader({ queries }: { queries: DataQuery[] }) {
  const t = useT();
  const selected = useTrialQueriesStore((state) => state.selected);
  const select = useTrialQueriesStore((state) => state.select);
  const ids = queries.map((query) => query.id);
  const isAll = ids.length > 0 && ids.every((id) => selected.includes(id));
  return (
    <th className="select-col">
      <input type="checkbox" data-testid="query-select-page" aria-label={t('queries.selectPage')} checked={isAll} onChange={(event) => select(ids, event.target.checked)} />
    </th>
  );
}

function SelectRowCell({ query }: { query: DataQuery }) {
  const t = useT();
  const isSelected = useTrialQueriesStore((state) => state.selected.includes(query.id));
  const select = useTrialQueriesStore((state) => state.select);
  return (
    <td className="select-col">
      <input
        type="checkbox"
        data-testid="query-select"
        aria-label={t('queries.select', { field: query.field, record: query.recordId })}
        checked={isSelected}
        onChange={(event) => select([query.id], event.target.checked)}
      />
    </td>
  );
}

interface QueryRowProps {
  projectId: string;
  query: DataQuery;
  showRecord: boolean;
  showEvent: boolean;
  isInteractive: boolean;
  mayChangeData: boolean;
  canSelect: boolean;
  columnCount: number;
}

function QueryRow({ projectId, query, showRecord, showEvent, isInteractive, mayChangeData, canSelect, columnCount }: QueryRowProps) {
  const t = useT();
  const format = useFormat();
  const [pending, setPending] = useState<QueryTransition | null>(null);
  const [isHistoryOpen, setHistoryOpen] = useState(false);
  // An identifier field this user may not see: the server sent null; show that it is hidden, not blank.
  const value = query.masked ? '••••' : formatValue(query.value);

  return (
    <>
      <tr data-testid="query-row" data-query-id={query.id} data-status={query.status} className={pending ? 'row-editing' : undefined}>
        {canSelect ? <SelectRowCell query={query} /> : null}
        {showRecord ? (
          <td>
            <a href={routes.trialRecord(projectId, query.recordId)} data-testid="query-record-link">
              {query.recordId}
            </a>
          </td>
        ) : null}
        {showEvent ? <td>{query.eventName || <span className="muted">—</span>}</td> : null}
        <td className="nowrap">{siteLabel(t, query.site)}</td>
        <td>
          <code>{query.field}</code>
          <div className="muted small" title={t('queries.col.rule')}>
            {query.ruleId}
          </div>
        </td>
        <td className="query-message">
          {query.message}
          {value ? <div className="muted small">{t('queries.value', { value })}</div> : null}
        </td>
        <td>
          <SeverityBadge severity={query.severity} />
        </td>
        <td>
          <QueryStatusBadge status={query.status} testId="query-status" />
          {query.status === 'held' ? (
            <div className="muted small" data-testid="query-held">
              {t('queries.held')}
            </div>
          ) : null}
          {query.noLongerFires ? (
            <div className="muted small" data-testid="query-no-longer-fires">
              {t(noLongerFiresKey(query, mayChangeData), { run: (query.noLongerFires.qcRunId ?? query.noLongerFires.taskRunId).slice(0, 8) })}
            </div>
          ) : null}
        </td>
        <td className="nowrap">{format.dateTime(query.createdAt)}</td>
        {isInteractive ? (
          <td className="actions-col">
            <div className="row-actions">
              {offeredMoves(query, mayChangeData).map((to) => (
                <button
                  key={to}
                  type="button"
                  className={`button button-small ${pending === to ? 'button-primary' : ''}`}
                  data-testid={`query-action-${to}`}
                  onClick={() => setPending(pending === to ? null : to)}
                >
                  {t(`queries.action.${to}`)}
                </button>
              ))}
              <button
                type="button"
                className="button button-small button-ghost"
                aria-expanded={isHistoryOpen}
                data-testid="query-history-toggle"
                onClick={() => setHistoryOpen(!isHistoryOpen)}
              >
                {isHistoryOpen ? t('queries.hideHistory') : t('queries.history')}
              </button>
            </div>
          </td>
        ) : null}
      </tr>
      {isInteractive && pending ? (
        <tr className="row-detail">
          <td colSpan={columnCount}>
            <TransitionForm projectId={projectId} query={query} to={pending} onDone={() => setPending(null)} />
          </td>
        </tr>
      ) : null}
      {isInteractive && isHistoryOpen ? (
        <tr className="row-detail">
          <td colSpan={columnCount}>
            <QueryHistory projectId={projectId} queryId={query.id} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** The comment prompt for one move; answering and reopening need a comment, closing does not. */
function TransitionForm({ projectId, query, to, onDone }: { projectId: string; query: DataQuery; to: QueryTransition; onDone(): void }) {
  const t = useT();
  const [comment, setComment] = useState('');
  const isSaving = useTrialQueriesStore((state) => state.savingQueryId === query.id);
  const transition = useTrialQueriesStore((state) => state.transition);
  const isRequired = needsComment(to);
  const canSubmit = !isSaving && (!isRequired || comment.trim() !== '');
  const inputId = `query-comment-${query.id}`;

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!canSubmit) return;
    if (await transition(projectId, query.id, to, comment)) onDone();
  }

  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} data-testid="query-transition-form">
      <label htmlFor={inputId} className="inline-form-label">
        {t(`queries.confirmTitle.${to}`, { field: query.field, record: query.recordId })}
      </label>
      <textarea
        id={inputId}
        data-testid="query-comment"
        rows={2}
        autoFocus
        placeholder={isRequired ? t('queries.commentRequired') : t('queries.commentOptional')}
        value={comment}
        onChange={(event) => setComment(event.target.value)}
      />
      <div className="inline-form-actions">
        <button type="submit" className="button button-primary button-small" data-testid="query-confirm" disabled={!canSubmit}>
          {isSaving ? t('common.saving') : t(`queries.confirm.${to}`)}
        </button>
        <button type="button" className="button button-small" onClick={onDone} disabled={isSaving}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

function QueryHistory({ projectId, queryId }: { projectId: string; queryId: string }) {
  const t = useT();
  const entry = useTrialQueriesStore((state) => state.history[queryId]);
  const loadHistory = useTrialQueriesStore((state) => state.loadHistory);
  const needsLoad = entry === undefined;

  // Loads on open, and again after a move of this query dropped its cached history.
  useEffect(() => {
    if (needsLoad) void loadHistory(projectId, queryId);
  }, [needsLoad, loadHistory, projectId, queryId]);

  if (!entry || entry.status === 'loading') return <Spinner label={t('common.loading')} />;
  if (entry.status === 'error') return <ErrorAlert error={entry.error} />;
  return <AuditTrail entries={entry.entries} testId="query-audit-entry" />;
}
