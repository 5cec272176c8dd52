import type { Scenario } from '../../api';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';

export function ScenarioCard({ scenario }: { scenario: Scenario }) {
  const t = useT();
  const documentCount = scenario.documents.length;
  return (
    <a className="card scenario-card" href={routes.chat(scenario.id)} data-testid={`scenario-card-${scenario.id}`}>
      <div className="card-head">
        <h2>{scenario.name}</h2>
        <span className="tag tag-output" title={t('scenarios.output')}>
          {scenario.outputType}
        </span>
        {scenario.engine.type === 'dify' ? (
          // A Dify app keeps its prompt, tools and knowledge in Dify: say so rather than show empty settings of ours.
          <span className="tag" title={t('scenarios.difyHint')} data-testid={`scenario-engine-${scenario.id}`}>
            {t('scenarios.engineDify', { mode: scenario.engine.appMode ?? 'chat' })}
          </span>
        ) : null}
      </div>
      <p className="scenario-description">{scenario.description}</p>
      <dl className="facts">
        <dt>{t('scenarios.tools')}</dt>
        <dd>
          {scenario.tools.length > 0 ? (
            scenario.tools.map((tool) => (
              <code className="chip" key={tool}>
                {tool}
              </code>
            ))
          ) : (
            <span className="muted">{t('scenarios.noTools')}</span>
          )}
        </dd>
      </dl>
      <div className="card-foot">
        <span data-testid="document-count">
          {documentCount === 1 ? t('scenarios.documentsOne') : t('scenarios.documents', { count: documentCount })}
        </span>
        <span className="muted">
          {scenario.rag.enabled
            ? t('scenarios.rag', { collection: scenario.rag.collection, topK: scenario.rag.topK })
            : t('scenarios.ragOff')}
        </span>
        <span className="card-open">{t('scenarios.open')} →</span>
      </div>
    </a>
  );
}
