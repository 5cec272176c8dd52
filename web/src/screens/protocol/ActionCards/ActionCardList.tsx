import type { ActionCardPayload } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { ActionCard } from './ActionCard';

/** The current stage's suggested actions, most important first. */
export function ActionCardList({ cards }: { cards: ActionCardPayload[] }) {
  const t = useT();
  if (cards.length === 0) return null;
  const sorted = [...cards].sort((a, b) => b.priority - a.priority);
  return (
    <section className="action-cards" aria-labelledby="action-cards-title">
      <h3 id="action-cards-title" className="small muted">
        {t('protocol.cards.title')}
      </h3>
      <ul>
        {sorted.map((card) => (
          <ActionCard key={card.cardId} card={card} />
        ))}
      </ul>
    </section>
  );
}
