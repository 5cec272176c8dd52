import { ApiError } from '../api';
import type { Translate } from './translate';

/**
 * The text to show for a failed call. Server messages are shown as sent (they say what to do next);
 * only failures where the server said nothing get a translated explanation.
 */
export function errorText(error: unknown, t: Translate): string {
  if (error instanceof ApiError) {
    if (error.code === 'NETWORK_ERROR') return t('common.error.network', { detail: error.message });
    if (error.code === 'UNEXPECTED_RESPONSE') return t('common.error.unexpected', { detail: error.message });
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
