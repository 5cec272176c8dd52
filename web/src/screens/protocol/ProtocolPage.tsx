import { useEffect } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useProtocolAgentStore } from '../../stores/protocol-agent';
import { ProtocolChat } from './ProtocolChat';
import { ProtocolList } from './ProtocolList';
import { StatePanel } from './StatePanel/StatePanel';
import './protocol.css';

/**
 * The Protocol Agent (seed 001 section 5): the researcher's protocols on the left, the conversation in the
 * middle, the state panel on the right. `#/protocol` opens the most recent protocol, if there is one.
 */
export function ProtocolPage({ conversationId }: { conversationId: string | null }) {
  const t = useT();
  const protocols = useProtocolAgentStore((state) => state.protocols);
  const hasLoadedList = useProtocolAgentStore((state) => state.hasLoadedList);
  const activeId = useProtocolAgentStore((state) => state.activeId);
  const context = useProtocolAgentStore((state) => state.context);
  const contextError = useProtocolAgentStore((state) => state.contextError);
  const { loadList, open } = useProtocolAgentStore.getState();

  useEffect(() => {
    void loadList();
  }, [loadList]);

  useEffect(() => {
    if (conversationId) void open(conversationId);
  }, [open, conversationId]);

  const mostRecent = protocols[0]?.conversationId;
  useEffect(() => {
    if (!conversationId && hasLoadedList && mostRecent) window.location.replace(routes.protocol(mostRecent));
  }, [conversationId, hasLoadedList, mostRecent]);

  const isOpen = conversationId !== null && activeId === conversationId;
  return (
    <section className="page protocol-page" aria-labelledby="protocol-title">
      <div className="section-head">
        <div>
          <h2 id="protocol-title">{t('protocol.title')}</h2>
          <p className="muted small">{t('protocol.intro')}</p>
        </div>
      </div>
      <div className="protocol-layout">
        <ProtocolList activeId={isOpen ? conversationId : null} />
        {!conversationId ? (
          <p className="empty">{t('protocol.none')}</p>
        ) : isOpen && context ? (
          <>
            <ProtocolChat />
            <StatePanel context={context} />
          </>
        ) : isOpen && contextError ? (
          <ErrorAlert error={contextError} title={t('protocol.openFailed')} />
        ) : (
          <Spinner label={t('common.loading')} />
        )}
      </div>
    </section>
  );
}
