import { isMessageKey, type Translate } from '../../i18n/translate';

/**
 * Translates a server enum value (a status, an outcome, an audit action) under `prefix`; a value this console
 * does not know yet is shown as the server sent it rather than hidden.
 */
export function enumLabel(t: Translate, prefix: string, value: string): string {
  const key = `${prefix}.${value.replace(/:/g, '.')}`;
  return isMessageKey(key) ? t(key) : value;
}

/** Sites are REDCap data access groups; a project without them stores ''. */
export function siteLabel(t: Translate, site: string): string {
  return site || t('trial.noSite');
}
