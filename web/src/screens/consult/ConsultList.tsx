import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useConsultStore } from '../../stores/consult';

/** The user's consults, most recently active first, and the form that starts a new one. */
export function ConsultList({ activeId }: { activeId: string | null }) {
  const t = useT();
  const format = useFormat();
  const sessions = useConsultStore((state) => state.sessions);
  const hasLoaded = useConsultStore((state) => state.hasLoadedList);
  const listError = useConsultStore((state) => state.listError);
  const isCreating = useConsultStore((state) => state.isCreating);
  const createError = useConsultStore((state) => state.createError);
  const [title, setTitle] = useState('');

  async function start(event: FormEvent) {
    event.preventDefault();
    const sessionId = await useConsultStore.getState().create(title.trim() || undefined);
    if (sessionId) {
      setTitle('');
      window.location.hash = routes.consult(sessionId);
    }
  }

  return (
    <nav className="panel consult-list" aria-labelledby="consult-list-title">
      <h2 id="consult-list-title" className="panel-title">
        {t('consult.list.title')}
      </h2>
      <form className="consult-new" onSubmit={(event) => void start(event)}>
        <label htmlFor="consult-new-title" className="small muted">
          {t('consult.newTitle')}
        </label>
        <input id="consult-new-title" value={title} maxLength={200} onChange={(event) => setTitle(event.target.value)} />
        <button type="submit" className="button button-primary button-small" disabled={isCreating}>
          {isCreating ? t('consult.starting') : t('consult.new')}
        </button>
      </form>
      {createError ? <ErrorAlert error={createError} /> : null}
      {listError ? <ErrorAlert error={listError} /> : null}
      {!hasLoaded && !listError ? <Spinner label={t('common.loading')} /> : null}
      {hasLoaded && !listError && sessions.length === 0 ? <p className="muted small">{t('consult.list.empty')}</p> : null}
      <ul className="conversation-items">
        {sessions.map((session) => {
          const isOpen = session.sessionId === activeId;
          return (
            <li key={session.sessionId}>
              <a
                href={routes.consult(session.sessionId)}
                className={`conversation-item ${isOpen ? 'conversation-item-open' : ''}`}
                aria-current={isOpen ? 'page' : undefined}
                data-testid="consult-item"
                title={format.dateTime(session.updatedAt)}
              >
                <span className="conversation-item-title">{session.title}</span>
                <span className="consult-item-meta small">
                  <span className={`risk-dot risk-dot-${session.riskLevel}`} aria-hidden="true" />
                  {t(`consult.risk.${session.riskLevel}`)} · {t(`consult.status.${session.status}`)}
                </span>
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
