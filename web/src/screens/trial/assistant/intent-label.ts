import type { Translate } from '../../../i18n/translate';
import type { IntentBadge } from '../../../stores/assistant-stream';
import { enumLabel } from '../labels';

/** "Data question", or "Write request → guided" when the part was handled otherwise than with an answer. */
export function intentBadgeLabel(t: Translate, badge: IntentBadge): string {
  const intent = enumLabel(t, 'assistant.intent', badge.type);
  if (!badge.ending || badge.ending === 'answer') return intent;
  return t('assistant.badge', { intent, ending: enumLabel(t, 'assistant.ending', badge.ending) });
}
