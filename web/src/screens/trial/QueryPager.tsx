import { useT } from '../../i18n/use-t';
import { useTrialQueriesStore } from '../../stores/trial-queries';
import { pageCount, QUERY_PAGE_SIZES } from '../../stores/query-paging';

/** Page controls of the server-paged query list: first, previous, where you are, next, last, and rows per page. */
export function QueryPager({ projectId }: { projectId: string }) {
  const t = useT();
  const paging = useTrialQueriesStore((state) => state.paging);
  const total = useTrialQueriesStore((state) => state.total);
  const isLoading = useTrialQueriesStore((state) => state.isLoading);
  const setPage = useTrialQueriesStore((state) => state.setPage);
  const setPageSize = useTrialQueriesStore((state) => state.setPageSize);
  const pages = pageCount(total, paging.pageSize);
  const go = (page: number) => void setPage(projectId, page);
  const isFirst = paging.page <= 1;
  const isLast = paging.page >= pages;

  return (
    <nav className="pager" aria-label={t('queries.paging')} data-testid="query-pager">
      <button type="button" className="button button-small" data-testid="query-page-first" disabled={isLoading || isFirst} onClick={() => go(1)}>
        {t('queries.page.first')}
      </button>
      <button type="button" className="button button-small" data-testid="query-page-previous" disabled={isLoading || isFirst} onClick={() => go(paging.page - 1)}>
        {t('queries.page.previous')}
      </button>
      <span className="small" data-testid="query-page">
        {t('queries.page', { page: paging.page, pages })}
      </span>
      <button type="button" className="button button-small" data-testid="query-page-next" disabled={isLoading || isLast} onClick={() => go(paging.page + 1)}>
        {t('queries.page.next')}
      </button>
      <button type="button" className="button button-small" data-testid="query-page-last" disabled={isLoading || isLast} onClick={() => go(pages)}>
        {t('queries.page.last')}
      </button>
      <label className="pager-size small">
        {t('queries.pageSize')}
        <select data-testid="query-page-size" value={paging.pageSize} onChange={(event) => void setPageSize(projectId, Number(event.target.value))}>
          {QUERY_PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}
