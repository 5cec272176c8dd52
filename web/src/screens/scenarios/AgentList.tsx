import { useEffect } from 'react';
import type { AgentSummary } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useT } from '../../i18n/use-t';
import { useAgentsStore } from '../../stores/agents';

/**
 * Every agent of the server's registry the user may see (GET /api/agents): scenarios, staged agents and
 * conversations for everyone, the judge, router and upkeep agents for admins too. One row per agent: what runs
 * it, its tools, the answer it must give and its limits, as the runtime holds it.
 */
export function AgentList() {
  const t = useT();
  const { agents, hasLoaded, error, load } = useAgentsStore();

  useEffect(() => {
    void load();
  }, [load]);

  if (error) return <ErrorAlert error={error} />;
  if (!hasLoaded || agents.length === 0) return null;
  return (
    <section className="agent-list" data-testid="agent-list">
      <h2>{t('agents.title')}</h2>
      <p className="muted">{t('agents.intro')}</p>
      <table className="table">
        <tbody>
          {agents.map((agent) => (
            <AgentRow key={agent.id} agent={agent} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function AgentRow({ agent }: { agent: AgentSummary }) {
  const t = useT();
  const tools = [...agent.tools, ...agent.requestTools];
  const limits = Object.entries(agent.limits).filter(([, value]) => value !== undefined && value !== false);
  return (
    <tr data-testid={`agent-${agent.id}`}>
      <td>
        <strong>{agent.name}</strong>
        <div className="small muted">
          <code>{agent.id}</code> · {t(`agents.kind.${agent.kind}`)}
        </div>
        <div className="small">{agent.description}</div>
      </td>
      <td className="small">
        {agent.engine.type === 'dify' ? t('scenarios.engineDifyOn', { mode: agent.engine.appMode ?? 'chat', host: agent.engine.host ?? '' }) : t('agents.engineBuiltin')}
      </td>
      <td className="small">
        {tools.length > 0 ? (
          tools.map((tool) => (
            <code className="chip" key={tool}>
              {tool}
            </code>
          ))
        ) : (
          <span className="muted">{t('scenarios.noTools')}</span>
        )}
      </td>
      <td className="small" title={JSON.stringify(agent.answer.schema, null, 2)}>
        {t('agents.answer')}: {t(`agents.answerFormat.${agent.answer.format}`)}
      </td>
      <td className="small">
        {t('agents.limits')}: {limits.length > 0 ? limits.map(([name, value]) => `${name} ${String(value)}`).join(', ') : t('agents.noLimits')}
        {agent.stages?.length ? (
          <div>
            {t('agents.stages')}: {agent.stages.map((stage) => stage.name).join(' → ')}
          </div>
        ) : null}
      </td>
    </tr>
  );
}
