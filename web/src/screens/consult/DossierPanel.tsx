import type { ConsultSession } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { useConsultIsRunning, useConsultStore } from '../../stores/consult';
import { DossierView } from './DossierView';
import { MedicalContextView } from './MedicalContextView';

/**
 * The right column: the medical context the consult keeps, and its dossier (the structured record) to read here
 * or download as Markdown or DOCX. The dossier is made from the consult as it stands when it is opened.
 */
export function DossierPanel({ session }: { session: ConsultSession }) {
  const t = useT();
  const format = useFormat();
  const dossier = useConsultStore((state) => state.dossier);
  const isLoading = useConsultStore((state) => state.isLoadingDossier);
  const dossierError = useConsultStore((state) => state.dossierError);
  const downloading = useConsultStore((state) => state.downloading);
  const downloadError = useConsultStore((state) => state.downloadError);
  const isRunning = useConsultIsRunning();
  const { loadDossier, download } = useConsultStore.getState();
  const hasTurns = session.turns.length > 0;

  return (
    <aside className="panel consult-side" aria-labelledby="consult-side-title">
      <h2 id="consult-side-title" className="panel-title">
        {t('consult.side.title')}
      </h2>
      <MedicalContextView context={session.medicalContext} />
      <section className="consult-section" aria-labelledby="consult-dossier-title">
        <h3 id="consult-dossier-title">{t('consult.dossier.title')}</h3>
        <p className="muted small">
          {session.dossier ? t('consult.dossier.last', { time: format.dateTime(session.dossier.createdAt) }) : t('consult.dossier.intro')}
        </p>
        <div className="page-actions">
          <button type="button" className="button button-small button-primary" onClick={() => void loadDossier()} disabled={!hasTurns || isLoading || isRunning}>
            {dossier ? t('consult.dossier.refresh') : t('consult.dossier.view')}
          </button>
          <button type="button" className="button button-small" onClick={() => void download('md')} disabled={!hasTurns || downloading !== null || isRunning}>
            {t('consult.dossier.md')}
          </button>
          <button type="button" className="button button-small" onClick={() => void download('docx')} disabled={!hasTurns || downloading !== null || isRunning}>
            {t('consult.dossier.docx')}
          </button>
        </div>
        {isLoading ? <Spinner label={t('consult.dossier.loading')} /> : null}
        {downloading ? <p className="muted small">{t('consult.dossier.downloading')}</p> : null}
        {dossierError ? <ErrorAlert error={dossierError} title={t('consult.dossier.failed')} /> : null}
        {downloadError ? <ErrorAlert error={downloadError} title={t('consult.dossier.downloadFailed')} /> : null}
        {dossier ? <DossierView dossier={dossier} /> : null}
      </section>
      <p className="muted small">{t('consult.tokens', { used: session.tokensUsed, budget: session.tokenBudget })}</p>
    </aside>
  );
}
