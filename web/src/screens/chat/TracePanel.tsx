import { useEffect } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useTracesStore } from '../../stores/traces';

function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : String(value);
}

/** The run's spans (retrieval, model calls, tools) so a user can see where time and tokens went. */
export function TracePanel({ traceId }: { traceId: string }) {
  const t = useT();
  const entry = useTracesStore((state) => state.entries[traceId]);
  const load = useTracesStore((state) => state.load);

  useEffect(() => {
    void load(traceId);
  }, [load, traceId]);

  if (!entry || entry.status === 'loading') return <Spinner label={t('trace.loading')} />;
  if (entry.status === 'error') return <ErrorAlert error={entry.error} />;

  const { trace } = entry;
  return (
    <section className="trace-panel" data-testid="trace-panel">
      <h4>
        {t('trace.title', { id: trace.id })} · <span className="muted">{trace.name}</span>{' '}
        <span className="tag">{trace.status}</span>
      </h4>
      {trace.spans.length === 0 ? (
        <p className="muted small">{t('trace.noSpans')}</p>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <thead>
              <tr>
                <th>{t('trace.kind')}</th>
                <th>{t('trace.name')}</th>
                <th>{t('trace.status')}</th>
                <th className="num">{t('trace.duration')}</th>
                <th className="num">{t('trace.tokens')}</th>
                <th>{t('trace.error')}</th>
              </tr>
            </thead>
            <tbody>
              {trace.spans.map((span, index) => (
                <tr key={index} className={span.error ? 'row-error' : undefined}>
                  <td>{span.kind}</td>
                  <td>{span.name}</td>
                  <td>{span.status}</td>
                  <td className="num">
                    {span.durationMs == null ? '—' : t('answer.latencyValue', { ms: span.durationMs })}
                  </td>
                  <td className="num">
                    {formatNumber(span.promptTokens)} / {formatNumber(span.completionTokens)}
                  </td>
                  <td className="error-cell">{span.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
