import type { ActionCardPayload } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { consoleHref } from '../../../router';

/**
 * One suggested action. A deep link opens its console page (the sample-size calculator, pre-filled from the
 * protocol) in this tab, so "Use in protocol" there can bring the researcher back. Other cards carry no
 * console page: they describe what to do next in the conversation.
 */
export function ActionCard({ card }: { card: ActionCardPayload }) {
  const t = useT();
  const href = card.actionType === 'deep_link' && card.actionUrl ? consoleHref(card.actionUrl) : null;
  return (
    <li className="action-card" data-testid="action-card" data-card-id={card.cardId}>
      <div className="action-card-text">
        <strong>{card.title}</strong>
        {card.description ? <span className="muted small">{card.description}</span> : null}
      </div>
      {href ? (
        <a className="button button-small button-primary" href={href} aria-label={`${t('protocol.cards.open')}: ${card.title}`}>
          {t('protocol.cards.open')}
        </a>
      ) : (
        <span className="muted small">{t('protocol.cards.noAction')}</span>
      )}
    </li>
  );
}
