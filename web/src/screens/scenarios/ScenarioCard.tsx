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
      {scenario.engine.type === 'dify' ? (
        // Its prompt, tools and documents are the app's, in Dify: the card says where it runs instead of "no tools".
        <dl className="facts">
          <dt>{t('scenarios.engine')}</dt>
          <dd data-testid={`scenario-engine-host-${scenario.id}`}>{t('scenarios.engineDifyOn', { mode: scenario.engine.appMode ?? 'chat', host: scenario.engine.host ?? '' })}</dd>
        </dl>
      ) : (
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
      )}
      <div className="card-foot">
        {scenario.engine.type === 'dify' ? (
          <span className="muted">{t('scenarios.difyHint')}</span>
        ) : (
          <>
            <span data-testid="document-count">
              {documentCount === 1 ? t('scenarios.documentsOne') : t('scenarios.documents', { count: documentCount })}
            </span>
            <span className="muted">
              {scenario.rag.enabled
                ? t('scenarios.rag', { collection: scenario.rag.collection, topK: scenario.rag.topK })
                : t('scenarios.ragOff')}
            </span>
          </>
        )}
        <span className="card-open">{t('scenarios.open')} →</span>
      </div>
    </a>
  );
}
