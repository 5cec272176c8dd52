import { useEffect } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useScenariosStore } from '../../stores/scenarios';
import { ScenarioCard } from './ScenarioCard';

export function ScenarioListScreen() {
  const t = useT();
  const { scenarios, hasLoaded, isLoading, error, load } = useScenariosStore();

  // Reload on every visit: documents are ingested in the background, so counts change after start-up.
  useEffect(() => {
    void load();
  }, [load]);

  return (
    <main className="page">
      <div className="page-head">
        <div>
          <h1>{t('scenarios.title')}</h1>
          <p className="muted">{t('scenarios.intro')}</p>
        </div>
        <button type="button" className="button" onClick={() => void load()} disabled={isLoading}>
          {t('common.refresh')}
        </button>
      </div>
      {error ? <ErrorAlert error={error} /> : null}
      {!hasLoaded && isLoading ? <Spinner label={t('common.loading')} /> : null}
      {hasLoaded && scenarios.length === 0 ? <p className="empty">{t('scenarios.empty')}</p> : null}
      <div className="card-grid">
        {scenarios.map((scenario) => (
          <ScenarioCard key={scenario.id} scenario={scenario} />
        ))}
      </div>
    </main>
  );
}
