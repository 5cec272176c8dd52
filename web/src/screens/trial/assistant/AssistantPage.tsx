import { useEffect, useMemo, useRef } from 'react';
import { useT } from '../../../i18n/use-t';
import { assistantConversationOf, useAssistantChatStore, useAssistantTurnsStore } from '../../../stores/assistant-chat';
import { conversationsOf, useConversationsStore } from '../../../stores/conversations';
import { ChatComposer } from '../../chat/ChatComposer';
import { ConversationList } from '../../chat/ConversationList';
import { EarlierTurns } from '../../chat/EarlierTurns';
import { AnswerFooter } from './AnswerFooter';
import { AssistantTurnView } from './AssistantTurnView';

/**
 * The trial assistant of one project: a PI or coordinator asks in plain language and reads a short answer as it
 * arrives. A conversation continues until "New conversation"; earlier ones of this project can be reopened.
 */
export function AssistantPage({ projectId }: { projectId: string }) {
  const t = useT();
  const scope = useMemo(() => ({ projectId }), [projectId]);
  const conversation = useAssistantTurnsStore((state) => assistantConversationOf(state, projectId));
  const { send, stop, clear } = useAssistantChatStore.getState();
  const earlier = useConversationsStore((state) => conversationsOf(state, scope));
  const endRef = useRef<HTMLDivElement>(null);

  function openConversation(conversationId: string) {
    clear(projectId);
    void useConversationsStore.getState().open(scope, conversationId);
  }

  useEffect(() => {
    endRef.current?.scrollIntoView({ block: 'end', behavior: 'smooth' });
  }, [conversation.turns]);

  const openId = earlier.activeId;
  const isEmpty = conversation.turns.length === 0 && earlier.earlierTurns.length === 0 && !earlier.isOpening;

  return (
    <section className="assistant-page" aria-labelledby="assistant-title">
      <div className="section-head">
        <div>
          <h2 id="assistant-title">{t('assistant.title')}</h2>
          <p className="muted small">{t('assistant.intro')}</p>
        </div>
        {conversation.turns.length > 0 || openId ? (
          <button type="button" className="button button-small" onClick={() => clear(projectId)} disabled={conversation.isRunning} data-testid="new-conversation">
            {t('chat.clear')}
          </button>
        ) : null}
      </div>
      <div className="chat-layout">
        <section className="conversation" aria-live="polite">
          {isEmpty ? <p className="empty">{t('assistant.empty')}</p> : null}
          <EarlierTurns
            turns={earlier.earlierTurns}
            isOpening={earlier.isOpening}
            openError={earlier.openError}
            hideToolTurns
            agentLabel={t('assistant.name')}
            answerFooter={(turn) => <AnswerFooter projectId={projectId} conversationId={openId} turnSeq={turn.seq} traceId={turn.traceId} />}
          />
          {conversation.turns.map((turn) => (
            <AssistantTurnView key={turn.id} projectId={projectId} turn={turn} />
          ))}
          <div ref={endRef} />
          <ChatComposer
            isRunning={conversation.isRunning}
            canSend
            placeholder={t('assistant.placeholder')}
            onSend={(input) => void send(projectId, input)}
            onStop={() => stop(projectId)}
          />
        </section>
        <aside className="chat-side">
          <ConversationList scope={scope} onOpen={openConversation} disabled={conversation.isRunning} emptyText={t('assistant.noConversations')} />
        </aside>
      </div>
    </section>
  );
}
