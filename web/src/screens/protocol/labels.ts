import { isMessageKey } from '../../i18n/translate';
import type { Translate } from '../../i18n/translate';

/**
 * Names of stages, context fields and their keys in the reader's language. The server's configuration may add
 * stages and keys the console has no words for; those show as the server names them.
 */
export function stageLabel(t: Translate, stageId: string, serverName?: string): string {
  const key = `protocol.stage.${stageId}`;
  return isMessageKey(key) ? t(key) : (serverName ?? stageId);
}

export function fieldLabel(t: Translate, field: string): string {
  const key = `protocol.field.${field}`;
  return isMessageKey(key) ? t(key) : field;
}

export function keyLabel(t: Translate, path: string): string {
  const key = `protocol.key.${path}`;
  return isMessageKey(key) ? t(key) : path;
}
