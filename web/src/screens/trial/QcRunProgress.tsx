import type { QcRunProgress as Progress } from '../../api';
import { useT } from '../../i18n/use-t';

function percent(part: number, total: number): string {
  return `${total > 0 ? (part / total) * 100 : 0}%`;
}

/**
 * done / total as a bar: completed, waiting for review and failed runs in their own colours, runs a worker
 * holds right now striped, pending ones empty. The text is the contract the e2e test reads.
 */
export function QcRunProgressBar({ run }: { run: Progress }) {
  const t = useT();
  const label = t('runs.progressLabel', { done: run.done, total: run.total, failed: run.failed });
  return (
    <div className="progress" data-testid="qc-run-progress" data-run-id={run.id} data-status={run.status}>
      <div className="progress-track" role="progressbar" aria-valuemin={0} aria-valuemax={run.total} aria-valuenow={run.done} aria-label={label} title={label}>
        <span className="progress-seg progress-ok" style={{ width: percent(run.completed, run.total) }} />
        <span className="progress-seg progress-warn" style={{ width: percent(run.suspended, run.total) }} />
        <span className="progress-seg progress-fail" style={{ width: percent(run.failed, run.total) }} />
        <span className="progress-seg progress-running" style={{ width: percent(run.running, run.total) }} />
      </div>
      <span className="progress-text" data-testid="qc-run-progress-text">
        {t('runs.progressText', { done: run.done, total: run.total })}
      </span>
    </div>
  );
}
