import { useCallback } from 'react';
import { useLocaleStore } from '../stores/locale';
import type { MessageKey } from './en';
import { translate, type Translate, type TranslateVars } from './translate';

/** Returns `t` bound to the current language; components re-render when the language changes. */
export function useT(): Translate {
  const locale = useLocaleStore((state) => state.locale);
  return useCallback((key: MessageKey, vars?: TranslateVars) => translate(locale, key, vars), [locale]);
}
