import { isMessageKey, type Translate } from '../../i18n/translate';
import { humanizeKey } from './readable';

/**
 * A medical-context or dossier key in the reader's language. The model may record keys the console has no words
 * for, and the dossier may gain sections; those show humanized as the server names them.
 */
export function contextLabel(t: Translate, key: string): string {
  const known = `consult.context.${key}`;
  return isMessageKey(known) ? t(known) : humanizeKey(key);
}

export function dossierLabel(t: Translate, key: string): string {
  const known = `consult.dossier.key.${key}`;
  return isMessageKey(known) ? t(known) : contextLabel(t, key);
}

export const yesNo = (t: Translate) => ({ yes: t('consult.yes'), no: t('consult.no') });
