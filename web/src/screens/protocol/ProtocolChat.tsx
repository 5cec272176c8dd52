import { useEffect, useRef } from 'react';
import { useT } from '../../i18n/use-t';
import { useProtocolAgentStore, useProtocolConversation } from '../../stores/protocol-agent';
import { ChatComposer } from '../chat/ChatComposer';
import { EarlierTurns } from '../chat/EarlierTurns';
import { ActionCardList } from './ActionCards/ActionCardList';
import { ProtocolTurnView } from './ProtocolTurnView';

/** The conversation with the agent: replies as they are written, the stage's suggested actions under the last one. */
export function ProtocolChat() {
  const t = useT();
  const earlier = useProtocolAgentStore((state) => state.earlier);
  const { turns, isRunning } = useProtocolConversation();
  const actionCards = useProtocolAgentStore((state) => state.actionCards);
  const { send, stop } = useProtocolAgentStore.getState();
  const endRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'end', behavior: 'smooth' });
  }, [turns]);

  return (
    <section className="conversation protocol-chat" aria-label={t('protocol.chatLabel')} aria-live="polite">
      {turns.length === 0 && earlier.turns.length === 0 && !earlier.isLoading ? <p className="empty">{t('protocol.chatEmpty')}</p> : null}
      <EarlierTurns turns={earlier.turns} isOpening={earlier.isLoading} openError={earlier.error} hideToolTurns agentLabel={t('protocol.agentName')} />
      {turns.map((turn) => (
        <ProtocolTurnView key={turn.id} turn={turn} />
      ))}
      {!isRunning ? <ActionCardList cards={actionCards} /> : null}
      <div ref={endRef} />
      <ChatComposer isRunning={isRunning} canSend placeholder={t('protocol.placeholder')} onSend={(input) => void send(input)} onStop={stop} />
    </section>
  );
}
