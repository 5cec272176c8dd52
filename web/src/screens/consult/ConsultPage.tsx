import { useEffect } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useConsultStore } from '../../stores/consult';
import { ConsultChat } from './ConsultChat';
import { ConsultList } from './ConsultList';
import { DossierPanel } from './DossierPanel';
import { RiskBanner } from './RiskBanner';
import './consult.css';

/**
 * The dermatology consult (seed 003): the patient's consults on the left, the conversation with its risk level in
 * the middle, what the consult has recorded and its dossier on the right. `#/consult` opens the most recent one.
 */
export function ConsultPage({ sessionId }: { sessionId: string | null }) {
  const t = useT();
  const sessions = useConsultStore((state) => state.sessions);
  const hasLoadedList = useConsultStore((state) => state.hasLoadedList);
  const activeId = useConsultStore((state) => state.activeId);
  const session = useConsultStore((state) => state.session);
  const sessionError = useConsultStore((state) => state.sessionError);
  const { loadList, open } = useConsultStore.getState();

  useEffect(() => {
    void loadList();
  }, [loadList]);

  useEffect(() => {
    if (sessionId) void open(sessionId);
  }, [open, sessionId]);

  const mostRecent = sessions[0]?.sessionId;
  useEffect(() => {
    if (!sessionId && hasLoadedList && mostRecent) window.location.replace(routes.consult(mostRecent));
  }, [sessionId, hasLoadedList, mostRecent]);

  const isOpen = sessionId !== null && activeId === sessionId;
  return (
    <section className="page consult-page" aria-labelledby="consult-title">
      <div className="section-head">
        <div>
          <h2 id="consult-title">{t('consult.title')}</h2>
          <p className="muted small">{t('consult.intro')}</p>
        </div>
      </div>
      <div className="consult-layout">
        <ConsultList activeId={isOpen ? sessionId : null} />
        {!sessionId ? (
          <p className="empty">{t('consult.none')}</p>
        ) : isOpen && session ? (
          <>
            <div className="consult-main">
              <RiskBanner session={session} />
              <ConsultChat session={session} />
            </div>
            <DossierPanel session={session} />
          </>
        ) : isOpen && sessionError ? (
          <ErrorAlert error={sessionError} title={t('consult.openFailed')} />
        ) : (
          <Spinner label={t('common.loading')} />
        )}
      </div>
    </section>
  );
}
