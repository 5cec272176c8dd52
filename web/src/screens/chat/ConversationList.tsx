import { useEffect } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { conversationsOf, useConversationsStore, type ConversationScope } from '../../stores/conversations';

interface ConversationListProps {
  /** A scenario's chat or a trial project's assistant. Keep it referentially stable: a new object reloads the list. */
  scope: ConversationScope;
  /** Reopens a conversation; the screen clears this session's turns first. */
  onOpen(conversationId: string): void;
  disabled?: boolean;
  /** Shown when there are none; the scenario chat's wording by default. */
  emptyText?: string;
}

/** The earlier conversations of a chat, most recently active first; the open one is marked. */
export function ConversationList({ scope, onOpen, disabled, emptyText }: ConversationListProps) {
  const t = useT();
  const format = useFormat();
  const state = useConversationsStore((store) => conversationsOf(store, scope));
  const load = useConversationsStore((store) => store.load);

  useEffect(() => {
    void load(scope);
  }, [load, scope]);

  return (
    <section className="panel conversation-list" data-testid="conversation-list">
      <h2 className="panel-title">{t('conversations.title')}</h2>
      {state.listError ? <ErrorAlert error={state.listError} /> : null}
      {!state.hasLoaded && state.isLoading ? <Spinner label={t('common.loading')} /> : null}
      {state.hasLoaded && !state.listError && state.list.length === 0 ? <p className="muted small">{emptyText ?? t('conversations.empty')}</p> : null}
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
