import { useEffect, useState, type FormEvent } from 'react';
import type { DataQuery, QueryTransition } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { formatValue } from '../../i18n/format';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useTrialQueriesStore } from '../../stores/trial-queries';
import { AuditTrail } from './AuditTrail';
import { siteLabel } from './labels';
import { needsComment } from './query-lifecycle';
import { QueryStatusBadge, SeverityBadge } from './TrialBadges';

interface QueryTableProps {
  projectId: string;
  queries: DataQuery[];
  /** Off on the record page, where every row is the same record. */
  showRecord?: boolean;
  /** Lifecycle buttons and history; only the Queries page, which owns the query store, turns them on. */
  isInteractive?: boolean;
}

export function QueryTable({ projectId, queries, showRecord = true, isInteractive = false }: QueryTableProps) {
  const t = useT();
  // Queries raised on a whole record carry no event; an empty column would only push the message aside.
  const showEvent = queries.some((query) => query.eventName);
  const columnCount = 6 + (showRecord ? 1 : 0) + (showEvent ? 1 : 0) + (isInteractive ? 1 : 0);
  return (
    <div className="table-scroll">
      <table className="table query-table">
        <thead>
          <tr>
            {showRecord ? <th>{t('queries.col.record')}</th> : null}
            {showEvent ? <th>{t('queries.col.event')}</th> : null}
            <th>{t('queries.col.site')}</th>
            <th>{t('queries.col.field')}</th>
            <th>{t('queries.col.message')}</th>
            <th>{t('queries.col.severity')}</th>
            <th>{t('queries.col.status')}</th>
            <th>{t('queries.col.created')}</th>
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
              columnCount={columnCount}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface QueryRowProps {
  projectId: string;
  query: DataQuery;
  showRecord: boolean;
  showEvent: boolean;
  isInteractive: boolean;
  columnCount: number;
}

function QueryRow({ projectId, query, showRecord, showEvent, isInteractive, columnCount }: QueryRowProps) {
  const t = useT();
  const format = useFormat();
  const [pending, setPending] = useState<QueryTransition | null>(null);
  const [isHistoryOpen, setHistoryOpen] = useState(false);
  // An identifier field this user may not see: the server sent null; show that it is hidden, not blank.
  const value = query.masked ? '••••' : formatValue(query.value);

  return (
    <>
      <tr data-testid="query-row" data-query-id={query.id} data-status={query.status} className={pending ? 'row-editing' : undefined}>
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
          {query.heldByTaskRunId ? (
            <div className="muted small" data-testid="query-held">
              {t('queries.held')}
            </div>
          ) : null}
          {query.noLongerFires ? (
            <div className="muted small" data-testid="query-no-longer-fires">
              {t('queries.noLongerFires', { run: (query.noLongerFires.qcRunId ?? query.noLongerFires.taskRunId).slice(0, 8) })}
            </div>
          ) : null}
        </td>
        <td className="nowrap">{format.dateTime(query.createdAt)}</td>
        {isInteractive ? (
          <td className="actions-col">
            <div className="row-actions">
              {query.allowedTransitions.map((to) => (
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
