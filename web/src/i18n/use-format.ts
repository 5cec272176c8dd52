import { useMemo } from 'react';
import { useLocaleStore } from '../stores/locale';
import { formatDateTime, formatRelative } from './format';

/** Date formatters bound to the current language; components re-render when the language changes. */
export function useFormat() {
  const locale = useLocaleStore((state) => state.locale);
  return useMemo(
    () => ({
      dateTime: (iso: string | null | undefined) => formatDateTime(iso, locale),
      relative: (iso: string | null | undefined) => formatRelative(iso, locale),
    }),
    [locale],
  );
}
