import { useEffect, useMemo, useRef, useState } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { excludedOf, scenarioConversationOf, useChatStore, useScenarioTurnsStore } from '../../stores/chat';
import { conversationsOf, useConversationsStore } from '../../stores/conversations';
import { useScenariosStore } from '../../stores/scenarios';
import { ChatComposer } from './ChatComposer';
import { ConversationList } from './ConversationList';
import { DifyAppPanel, startFormInputs, type StartFormRow } from './DifyAppPanel';
import { DocumentScopePicker } from './DocumentScopePicker';
import { EarlierTurns } from './EarlierTurns';
import { TurnView } from './TurnView';

export function ChatScreen({ scenarioId }: { scenarioId: string }) {
  const t = useT();
  const { scenarios, hasLoaded, isLoading, error, load } = useScenariosStore();
  const conversation = useScenarioTurnsStore((state) => scenarioConversationOf(state, scenarioId));
  const excludedDocumentIds = useChatStore((state) => excludedOf(state, scenarioId));
  const { send, stop, setExcluded, clear } = useChatStore.getState();
  const scope = useMemo(() => ({ scenarioId }), [scenarioId]);
  const earlier = useConversationsStore((state) => conversationsOf(state, { scenarioId }));
  const endRef = useRef<HTMLDivElement>(null);
  // A Dify app's start-form values as typed; null until edited, so the scenario's own variable names show first.
  const [formRows, setFormRows] = useState<StartFormRow[] | null>(null);
  // Another scenario's page starts from its own variables, not the values typed for the last one.
  useEffect(() => setFormRows(null), [scenarioId]);

  // Reopening an earlier conversation replaces this session's turns with that conversation's.
  function openConversation(conversationId: string) {
    clear(scenarioId);
    void useConversationsStore.getState().open({ scenarioId }, conversationId);
  }

  // Fresh document list on entry: ingestion runs in the background and may have finished since the list loaded.
  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    endRef.current?.scrollIntoView({ block: 'end', behavior: 'smooth' });
  }, [conversation.turns]);

  const scenario = scenarios.find((item) => item.id === scenarioId);
  if (!scenario) {
    if (!hasLoaded) {
      return <main className="page">{error ? <ErrorAlert error={error} /> : <Spinner label={t('common.loading')} />}</main>;
    }
    return (
      <main className="page">
        <ErrorAlert error={new Error(t('chat.notFound', { id: scenarioId }))} />
        <a href={routes.scenarios()}>← {t('chat.backToList')}</a>
      </main>
    );
  }

  const excluded = new Set(excludedDocumentIds);
  const selectedIds = scenario.documents.map((doc) => doc.documentId).filter((id) => !excluded.has(id));
  // All ticked (or nothing ingested yet) means no filter: the server then searches every document.
  const isWholeScope = selectedIds.length === scenario.documents.length;
  const canSend = scenario.documents.length === 0 || selectedIds.length > 0;
  const isDify = scenario.engine.type === 'dify';
  const rows = formRows ?? [...(scenario.engine.inputNames ?? []).map((name) => ({ name, value: '' })), { name: '', value: '' }];

  return (
    <main className="page chat-page">
      <div className="page-head">
        <div>
          <a className="back-link" href={routes.scenarios()}>
            ← {t('chat.backToList')}
          </a>
          <h1 data-testid="scenario-title">{scenario.name}</h1>
          <p className="muted">{scenario.description}</p>
        </div>
        <div className="page-actions">
          <button type="button" className="button" onClick={() => void load()} disabled={isLoading} data-testid="refresh-scenario">
            {t('common.refresh')}
          </button>
          {conversation.turns.length > 0 || earlier.activeId ? (
            <button type="button" className="button" onClick={() => clear(scenarioId)} disabled={conversation.isRunning} data-testid="new-conversation">
              {t('chat.clear')}
            </button>
          ) : null}
        </div>
      </div>
      {error ? <ErrorAlert error={error} /> : null}

      <div className="chat-layout">
        <section className="conversation" aria-live="polite">
          {conversation.turns.length === 0 && earlier.earlierTurns.length === 0 && !earlier.isOpening ? <p className="empty">{t('chat.empty')}</p> : null}
          <EarlierTurns turns={earlier.earlierTurns} isOpening={earlier.isOpening} openError={earlier.openError} />
          {conversation.turns.map((turn) => (
            <TurnView key={turn.id} turn={turn} />
          ))}
          <div ref={endRef} />
          <ChatComposer
            isRunning={conversation.isRunning}
            canSend={canSend}
            onSend={(input) => void send(scenarioId, input, isWholeScope ? undefined : selectedIds, isDify ? startFormInputs(rows) : undefined)}
            onStop={() => stop(scenarioId)}
          />
        </section>
        <aside className="chat-side">
          {isDify ? (
            // A Dify app's knowledge lives in Dify: no document scope of ours, its engine and start form instead.
            <DifyAppPanel engine={scenario.engine} rows={rows} onChange={setFormRows} disabled={conversation.isRunning} />
          ) : (
            <DocumentScopePicker
              documents={scenario.documents}
              excludedDocumentIds={excludedDocumentIds}
              onChange={(ids) => setExcluded(scenarioId, ids)}
              disabled={conversation.isRunning}
            />
          )}
          <ConversationList scope={scope} onOpen={openConversation} disabled={conversation.isRunning} />
        </aside>
      </div>
    </main>
  );
}
