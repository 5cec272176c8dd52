import { useEffect } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useScenariosStore } from '../../stores/scenarios';
import { AgentList } from './AgentList';
import { ScenarioCard } from './ScenarioCard';

export function ScenarioListScreen() {
  const t = useT();
  const { scenarios, invalid, hasLoaded, isLoading, error, load } = useScenariosStore();

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
      {invalid.length > 0 ? (
        // The server serves the other scenarios; these files wait for a fix and a restart.
        <div className="alert alert-warning" role="status" data-testid="invalid-scenarios">
          <strong className="alert-title">{t('scenarios.invalid', { count: invalid.length })}</strong>
          <ul className="small">
            {invalid.map((file) => (
              <li key={file.file}>
                <code>{file.file}</code>
                <ul>
                  {file.problems.map((problem) => (
                    <li key={problem}>{problem}</li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {hasLoaded && scenarios.length === 0 ? <p className="empty">{t('scenarios.empty')}</p> : null}
      <div className="card-grid">
        {scenarios.map((scenario) => (
          <ScenarioCard key={scenario.id} scenario={scenario} />
        ))}
      </div>
      <AgentList />
    </main>
  );
}
