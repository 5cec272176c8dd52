import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useProtocolAgentStore } from '../../stores/protocol-agent';
import { stageLabel } from './labels';

/** The researcher's protocols, most recently changed first, and the form that starts a new one. */
export function ProtocolList({ activeId }: { activeId: string | null }) {
  const t = useT();
  const format = useFormat();
  const protocols = useProtocolAgentStore((state) => state.protocols);
  const hasLoaded = useProtocolAgentStore((state) => state.hasLoadedList);
  const listError = useProtocolAgentStore((state) => state.listError);
  const isCreating = useProtocolAgentStore((state) => state.isCreating);
  const createError = useProtocolAgentStore((state) => state.createError);
  const [title, setTitle] = useState('');

  async function start(event: FormEvent) {
    event.preventDefault();
    const conversationId = await useProtocolAgentStore.getState().create(title.trim() || undefined);
    if (conversationId) {
      setTitle('');
      window.location.hash = routes.protocol(conversationId);
    }
  }

  return (
    <nav className="panel protocol-list" aria-labelledby="protocol-list-title">
      <h2 id="protocol-list-title" className="panel-title">
        {t('protocol.list.title')}
      </h2>
      <form className="protocol-new" onSubmit={(event) => void start(event)}>
        <label htmlFor="protocol-new-title" className="small muted">
          {t('protocol.newTitle')}
        </label>
        <input id="protocol-new-title" value={title} maxLength={200} onChange={(event) => setTitle(event.target.value)} />
        <button type="submit" className="button button-primary button-small" disabled={isCreating} data-testid="protocol-new">
          {isCreating ? t('protocol.starting') : t('protocol.new')}
        </button>
      </form>
      {createError ? <ErrorAlert error={createError} /> : null}
      {listError ? <ErrorAlert error={listError} /> : null}
      {!hasLoaded && !listError ? <Spinner label={t('common.loading')} /> : null}
      {hasLoaded && !listError && protocols.length === 0 ? <p className="muted small">{t('protocol.list.empty')}</p> : null}
      <ul className="conversation-items">
        {protocols.map((protocol) => {
          const isOpen = protocol.conversationId === activeId;
          return (
            <li key={protocol.conversationId}>
              <a
                href={routes.protocol(protocol.conversationId)}
                className={`conversation-item ${isOpen ? 'conversation-item-open' : ''}`}
                aria-current={isOpen ? 'page' : undefined}
                data-testid="protocol-item"
                title={format.dateTime(protocol.updatedAt)}
              >
                <span className="conversation-item-title">{protocol.title || t('protocol.untitled')}</span>
                <span className="muted small">
                  {t('protocol.list.stage', { stage: stageLabel(t, protocol.currentStage), done: protocol.completedStages.length })}
                </span>
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
