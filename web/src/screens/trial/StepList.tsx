import type { TaskRunStep } from '../../api';
import { CollapsibleJson } from '../../components/JsonView';
import { useFormat } from '../../i18n/use-format';
import type { Translate } from '../../i18n/translate';
import { useT } from '../../i18n/use-t';
import { enumLabel } from './labels';
import { OutcomeBadge } from './TrialBadges';

function field(detail: unknown, key: string): unknown {
  return typeof detail === 'object' && detail !== null ? (detail as Record<string, unknown>)[key] : undefined;
}

/** One line a reviewer can read without opening the JSON: violations, the LLM's reason, an error or a decision. */
function detailSummary(t: Translate, detail: unknown): string {
  const violations = field(detail, 'violations');
  if (typeof violations === 'number') return violations === 1 ? t('steps.violationsOne') : t('steps.violations', { count: violations });
  const reason = field(detail, 'reason');
  if (typeof reason === 'string') return reason;
  const error = field(detail, 'error');
  if (typeof error === 'string') return error;
  const reviewer = field(detail, 'reviewer');
  if (typeof reviewer === 'string') {
    const comment = field(detail, 'comment');
    return typeof comment === 'string' && comment ? t('steps.reviewByWithComment', { reviewer, comment }) : t('steps.reviewBy', { reviewer });
  }
  return '';
}

/** The path a task run took through its skill, one row per executed step. */
export function StepList({ steps }: { steps: TaskRunStep[] }) {
  const t = useT();
  const format = useFormat();
  if (steps.length === 0) return <p className="muted small">{t('steps.empty')}</p>;
  return (
    <div className="table-scroll">
      <table className="table step-table">
        <thead>
          <tr>
            <th>{t('steps.time')}</th>
            <th>{t('steps.node')}</th>
            <th>{t('steps.type')}</th>
            <th>{t('steps.outcome')}</th>
            <th>{t('steps.next')}</th>
            <th>{t('steps.detail')}</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step, index) => {
            const summary = detailSummary(t, step.detail);
            const hasDetail = typeof step.detail === 'object' && step.detail !== null && Object.keys(step.detail).length > 0;
            return (
              <tr key={index} data-testid="task-run-step">
                <td className="nowrap">{format.dateTime(step.at)}</td>
                <td>
                  <code>{step.node}</code>
                </td>
                <td>{enumLabel(t, 'step.type', step.type)}</td>
                <td>
                  <OutcomeBadge outcome={step.outcome} />
                </td>
                <td>{step.next ? <code>{step.next}</code> : <span className="muted">—</span>}</td>
                <td>
                  {summary ? <span>{summary}</span> : null}
                  {hasDetail ? <CollapsibleJson label={t('common.showJson')} value={step.detail} /> : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
