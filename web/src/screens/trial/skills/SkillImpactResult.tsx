import type { SkillImpact } from '../../../api/skills-api';
import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import { byRecord } from '../record-order';

type RuleRef = SkillImpact['rules']['added'][number];

function RuleIds({ kind, rules }: { kind: 'added' | 'removed' | 'changed'; rules: Array<RuleRef & { changes?: string[] }> }) {
  const t = useT();
  if (rules.length === 0) return null;
  return (
    <li data-testid={`skill-impact-${kind}`} data-count={rules.length}>
      {t(`skillImpact.rules.${kind}`, { count: rules.length })}{' '}
      {rules.map((rule) => (
        <span key={rule.ruleId} className="chip" data-rule-id={rule.ruleId}>
          <code>{rule.ruleId}</code>
          {rule.kind === 'soft' ? ` (${t('skillImpact.soft')})` : ''}
          {rule.changes?.length ? <span className="muted small"> {rule.changes.join(', ')}</span> : null}
        </span>
      ))}
    </li>
  );
}

/** One impact answer: which rules change, their open queries and what a re-run does to them, the records whose verdicts differ. */
export function SkillImpactResult({ projectId, impact, isStale }: { projectId: string; impact: SkillImpact; isStale: boolean }) {
  const t = useT();
  const { rules, openQueries, records, rerun, skippedNodes } = impact;
  return (
    <div data-testid="skill-impact-result" data-affected={records.affected} data-rerun={rerun.count}>
      {isStale ? <p className="alert alert-warning small">{t('skillImpact.stale')}</p> : null}
      {impact.isNewSkill ? <p className="muted small">{t('skillImpact.newSkill')}</p> : null}
      <ul className="small">
        <RuleIds kind="added" rules={rules.added} />
        <RuleIds kind="removed" rules={rules.removed} />
        <RuleIds kind="changed" rules={rules.changed} />
        <li className="muted">{t('skillImpact.rules.unchanged', { count: rules.unchanged })}</li>
      </ul>

      <p data-testid="skill-impact-queries" title={t('skillImpact.queries.hint')}>
        {t('skillImpact.queries', { count: openQueries.total })}
        <br />
        <span className="muted small" data-testid="skill-impact-queries-hint">{t('skillImpact.queries.hint')}</span>
      </p>
      {openQueries.byRule.length > 0 ? (
        <table className="table small">
          <thead>
            <tr>
              <th>{t('skillEditor.col.rule')}</th>
              <th className="num">{t('skillImpact.col.open')}</th>
              <th>{t('skillImpact.col.action')}</th>
            </tr>
          </thead>
          <tbody>
            {openQueries.byRule.map((row) => (
              <tr key={row.ruleId} data-testid="skill-impact-query-rule" data-rule-id={row.ruleId} data-action={row.action}>
                <td>
                  <code>{row.ruleId}</code>
                </td>
                <td className="num">{row.count}</td>
                <td>{t(`skillImpact.action.${row.action}`)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      <p title={t('skillImpact.records.hint')}>
        <span data-testid="skill-impact-records">{t('skillImpact.records', { affected: records.affected, evaluated: records.evaluated })}</span>
        <br />
        <span className="muted small" data-testid="skill-impact-records-hint">{t('skillImpact.records.hint')}</span>
      </p>
      {records.sample.length > 0 ? (
        <ul className="small" data-testid="skill-impact-sample">
          {byRecord(records.sample).map((row) => (
            <li key={row.recordId}>
              <a href={routes.trialRecord(projectId, row.recordId)}>{row.recordId}</a>{' '}
              <span className="muted">{row.ruleIds.join(', ')}</span>
            </li>
          ))}
          {records.affected > records.sample.length ? <li className="muted">{t('skillImpact.sampleMore', { count: records.affected - records.sample.length })}</li> : null}
        </ul>
      ) : null}
      <p className="muted small" title={t('skillImpact.rerun.hint')}>
        {rerun.truncated ? t('skillImpact.rerunAll', { count: rerun.count }) : t('skillImpact.rerun', { count: rerun.count })} {t('skillImpact.rerun.hint')}
      </p>

      {skippedNodes.length > 0 ? (
        <ul className="small muted" data-testid="skill-impact-skipped">
          {skippedNodes.map((node) => (
            <li key={node.node}>
              <code>{node.node}</code>: {node.reason}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
