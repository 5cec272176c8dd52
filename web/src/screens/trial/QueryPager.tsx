import { useT } from '../../i18n/use-t';
import { useTrialQueriesStore } from '../../stores/trial-queries';
import { QUERY_PAGE_SIZES } from '../../stores/query-paging';
import { Pager } from './Pager';

/** Page controls of the server-paged query list, with rows per page. */
export function QueryPager({ projectId }: { projectId: string }) {
  const t = useT();
  const paging = useTrialQueriesStore((state) => state.paging);
  const total = useTrialQueriesStore((state) => state.total);
  const isLoading = useTrialQueriesStore((state) => state.isLoading);
  const setPage = useTrialQueriesStore((state) => state.setPage);
  const setPageSize = useTrialQueriesStore((state) => state.setPageSize);

  return (
    <Pager page={paging.page} pageSize={paging.pageSize} total={total} isLoading={isLoading} onPage={(page) => void setPage(projectId, page)} testId="query-pager">
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
    </Pager>
  );
}
