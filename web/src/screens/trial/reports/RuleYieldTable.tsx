import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, type RuleYieldList, type RuleYieldRow } from '../../../api';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Spinner } from '../../../components/Spinner';
import { useT } from '../../../i18n/use-t';

const COUNTS = ['raised', 'open', 'held', 'answered', 'closedWithChange', 'closedNoChange', 'closedNoLongerFires', 'cancelled'] as const;

function percent(value: number | null): string {
  return value === null ? '—' : `${Math.round(value * 100)}%`;
}

function YieldRow({ rule }: { rule: RuleYieldRow }) {
  const t = useT();
  return (
    <tr data-testid="rule-yield-row" data-rule={rule.ruleId} data-low-yield={rule.lowYield ? 'true' : 'false'}>
      <td className="nowrap">
        <strong>{rule.ruleId}</strong>
        <div className="muted small">{rule.skillId}</div>
      </td>
      <td>{rule.field}</td>
      {COUNTS.map((key) => (
        <td key={key} className="num">
          {rule[key]}
        </td>
      ))}
      <td className="num" data-testid="rule-yield-value">
        {percent(rule.yield)}
        {rule.lowYield ? (
          <div>
            <span className="badge badge-warn" data-testid="rule-yield-low">
              {t('ruleYield.consider')}
            </span>
          </div>
        ) : null}
      </td>
    </tr>
  );
}

/**
 * Rule yield: for each rule, what its queries came to. Rules whose queries rarely change data are flagged, so the data
 * manager can move them to central review. Its own state: nothing else on the page reads it.
 */
export function RuleYieldTable({ projectId }: { projectId: string }) {
  const t = useT();
  const [since, setSince] = useState('');
  const [result, setResult] = useState<{ projectId: string; list: RuleYieldList } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [isLoading, setIsLoading] = useState(false);

  const load = useCallback(
    async (from: string) => {
      setIsLoading(true);
      setError(null);
      try {
        setResult({ projectId, list: await api.ruleYield.get(projectId, { since: from || undefined }) });
      } catch (failure) {
        setError(failure);
      } finally {
        setIsLoading(false);
      }
    },
    [projectId],
  );

  useEffect(() => {
    setResult(null);
    void load('');
  }, [load]);

  function apply(event: FormEvent) {
    event.preventDefault();
    void load(since);
  }

  const list = result?.projectId === projectId ? result.list : null;
  const lowCount = list?.rules.filter((rule) => rule.lowYield).length ?? 0;
  return (
    <section className="panel section" aria-labelledby="rule-yield-title" data-testid="rule-yield">
      <div className="section-head">
        <div>
          <h2 id="rule-yield-title">{t('ruleYield.title')}</h2>
          <p className="muted small">{t('ruleYield.intro')}</p>
        </div>
      </div>
      <form className="filter-bar" onSubmit={apply}>
        <label className="filter">
          {t('ruleYield.since')}
          <input type="date" data-testid="rule-yield-since" value={since} onChange={(event) => setSince(event.target.value)} />
        </label>
        <button type="submit" className="button button-small" disabled={isLoading}>
          {t('common.refresh')}
        </button>
      </form>
      {error ? <ErrorAlert error={error} /> : null}
      {!list && isLoading ? <Spinner label={t('common.loading')} /> : null}
      {list && list.rules.length === 0 ? <p className="empty">{t('ruleYield.empty')}</p> : null}
      {list && lowCount > 0 ? (
        <p className="small" data-testid="rule-yield-hint">
          {t('ruleYield.hint', { count: lowCount, percent: Math.round(list.thresholds.maxYield * 100), closed: list.thresholds.minClosed })}
        </p>
      ) : null}
      {list && list.rules.length > 0 ? (
        <div className="table-scroll">
          <table className="table">
            <thead>
              <tr>
                <th>{t('ruleYield.col.rule')}</th>
                <th>{t('ruleYield.col.field')}</th>
                {COUNTS.map((key) => (
                  <th key={key} className="num">
                    {t(`ruleYield.col.${key}`)}
                  </th>
                ))}
                <th className="num">{t('ruleYield.col.yield')}</th>
              </tr>
            </thead>
            <tbody>
              {list.rules.map((rule) => (
                <YieldRow key={`${rule.skillId}\u0000${rule.ruleId}\u0000${rule.field}`} rule={rule} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
