import { useEffect } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { conversationsOf, useConversationsStore } from '../../stores/conversations';

interface ConversationListProps {
  scenarioId: string;
  /** Reopens a conversation; the screen clears this session's turns first. */
  onOpen(conversationId: string): void;
  disabled?: boolean;
}

/** The scenario's earlier conversations, most recently active first; the open one is marked. */
export function ConversationList({ scenarioId, onOpen, disabled }: ConversationListProps) {
  const t = useT();
  const format = useFormat();
  const state = useConversationsStore((store) => conversationsOf(store, scenarioId));
  const load = useConversationsStore((store) => store.load);

  useEffect(() => {
    void load(scenarioId);
  }, [load, scenarioId]);

  return (
    <section className="panel conversation-list" data-testid="conversation-list">
      <h2 className="panel-title">{t('conversations.title')}</h2>
      {state.listError ? <ErrorAlert error={state.listError} /> : null}
      {!state.hasLoaded && state.isLoading ? <Spinner label={t('common.loading')} /> : null}
      {state.hasLoaded && !state.listError && state.list.length === 0 ? <p className="muted small">{t('conversations.empty')}</p> : null}
      {state.list.length > 0 ? (
        <ul className="conversation-items">
          {state.list.map((item) => {
            const isOpen = item.id === state.activeId;
            return (
              <li key={item.id}>
                <button
                  type="button"
                  className={`conversation-item ${isOpen ? 'conversation-item-open' : ''}`}
                  data-testid="conversation-item"
                  aria-current={isOpen ? 'true' : undefined}
                  disabled={disabled || isOpen}
                  onClick={() => onOpen(item.id)}
                  title={format.dateTime(item.updatedAt)}
                >
                  <span className="conversation-item-title">{item.title || t('conversations.untitled')}</span>
                  <span className="muted small">
                    {t('conversations.messages', { count: item.turnCount })} · {format.relative(item.updatedAt)}
                    {isOpen ? <> · <strong>{t('conversations.current')}</strong></> : null}
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}
