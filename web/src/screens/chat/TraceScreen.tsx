import { useT } from '../../i18n/use-t';
import { TracePanel } from './TracePanel';

/** One run's trace on its own page, opened from an assistant answer's trace link (admins). */
export function TraceScreen({ traceId }: { traceId: string }) {
  const t = useT();
  return (
    <main className="page">
      <div className="page-head">
        <div>
          <button type="button" className="link-button back-link" onClick={() => window.history.back()}>
            ← {t('common.back')}
          </button>
          <h1>{t('trace.pageTitle')}</h1>
          <p className="muted small">
            <code>{traceId}</code>
          </p>
        </div>
      </div>
      <TracePanel traceId={traceId} />
    </main>
  );
}
