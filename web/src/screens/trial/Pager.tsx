import { useT } from '../../i18n/use-t';

/** Page controls of a server-paged list of task runs (the review queue, a QC run's runs): where you are, and moves. */
export function RunPager({ page, pageSize, total, isLoading, onPage, testId }: { page: number; pageSize: number; total: number; isLoading: boolean; onPage(page: number): void; testId: string }) {
  const t = useT();
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  const isFirst = page <= 1;
  const isLast = page >= pages;
  return (
    <nav className="pager" aria-label={t('queries.paging')} data-testid={testId}>
      <button type="button" className="button button-small" data-testid={`${testId}-first`} disabled={isLoading || isFirst} onClick={() => onPage(1)}>
        {t('queries.page.first')}
      </button>
      <button type="button" className="button button-small" data-testid={`${testId}-previous`} disabled={isLoading || isFirst} onClick={() => onPage(page - 1)}>
        {t('queries.page.previous')}
      </button>
      <span className="small" data-testid={`${testId}-page`}>
        {t('queries.page', { page, pages })}
      </span>
      <button type="button" className="button button-small" data-testid={`${testId}-next`} disabled={isLoading || isLast} onClick={() => onPage(page + 1)}>
        {t('queries.page.next')}
      </button>
      <button type="button" className="button button-small" data-testid={`${testId}-last`} disabled={isLoading || isLast} onClick={() => onPage(pages)}>
        {t('queries.page.last')}
      </button>
    </nav>
  );
}
