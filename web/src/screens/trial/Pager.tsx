import type { ReactNode } from 'react';
import { useT } from '../../i18n/use-t';
import { pageCount } from '../../stores/query-paging';

interface PagerProps {
  page: number;
  pageSize: number;
  total: number;
  isLoading: boolean;
  onPage(page: number): void;
  /** The nav's test id; each control's is it plus `-first`, `-previous`, `-page`, `-next`, `-last`. */
  testId: string;
  /** More controls of the list (rows per page), shown after the moves. */
  children?: ReactNode;
}

/**
 * Page controls of a server-paged list (the query list, the review queue): first, previous, where you are, next,
 * last. A single page with nothing else to offer shows none.
 */
export function Pager({ page, pageSize, total, isLoading, onPage, testId, children }: PagerProps) {
  const t = useT();
  const pages = pageCount(total, pageSize);
  if (pages <= 1 && !children) return null;
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
      {children}
    </nav>
  );
}
