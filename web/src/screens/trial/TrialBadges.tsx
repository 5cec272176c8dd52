import type { QcRunStatus, QuerySeverity, QueryStatus, TaskRunStatus } from '../../api';
import { useT } from '../../i18n/use-t';
import { enumLabel } from './labels';

type Tone = 'ok' | 'fail' | 'warn' | 'info' | 'neutral';

const QC_RUN_TONE: Record<QcRunStatus, Tone> = { queued: 'neutral', running: 'info', waiting_review: 'warn', completed: 'ok', failed: 'fail', cancelled: 'neutral' };
const TASK_RUN_TONE: Record<TaskRunStatus, Tone> = { PENDING: 'neutral', RUNNING: 'info', SUSPENDED: 'warn', COMPLETED: 'ok', FAILED: 'fail' };
const QUERY_TONE: Record<QueryStatus, Tone> = { held: 'neutral', open: 'warn', answered: 'info', closed: 'ok', reopened: 'fail', cancelled: 'neutral' };
const SEVERITY_TONE: Record<QuerySeverity, Tone> = { error: 'fail', warning: 'warn', info: 'info' };
const OUTCOME_TONE: Record<string, Tone> = { pass: 'ok', fail: 'fail', error: 'fail', suspended: 'warn', approve: 'ok', reject: 'fail', notified: 'neutral', notify_failed: 'warn' };

function Badge({ tone, label, status, testId }: { tone: Tone; label: string; status: string; testId?: string }) {
  return (
    <span className={`badge badge-${tone}`} data-status={status} data-testid={testId}>
      {label}
    </span>
  );
}

/** A batch whose runs are all checked but some wait for a person reads "Waiting for review (n)", not "Completed". */
export function QcRunStatusBadge({ status, waiting = 0, testId }: { status: QcRunStatus; waiting?: number; testId?: string }) {
  const t = useT();
  const label = status === 'waiting_review' ? t('qcRun.status.waiting_review', { count: waiting }) : enumLabel(t, 'qcRun.status', status);
  return <Badge tone={QC_RUN_TONE[status] ?? 'neutral'} label={label} status={status} testId={testId} />;
}

export function TaskRunStatusBadge({ status, testId }: { status: TaskRunStatus; testId?: string }) {
  const t = useT();
  return <Badge tone={TASK_RUN_TONE[status] ?? 'neutral'} label={enumLabel(t, 'taskRun.status', status)} status={status} testId={testId} />;
}

export function QueryStatusBadge({ status, testId }: { status: QueryStatus; testId?: string }) {
  const t = useT();
  return <Badge tone={QUERY_TONE[status] ?? 'neutral'} label={enumLabel(t, 'query.status', status)} status={status} testId={testId} />;
}

export function SeverityBadge({ severity }: { severity: QuerySeverity }) {
  const t = useT();
  return <Badge tone={SEVERITY_TONE[severity] ?? 'neutral'} label={enumLabel(t, 'severity', severity)} status={severity} />;
}

export function OutcomeBadge({ outcome }: { outcome: string }) {
  const t = useT();
  return <Badge tone={OUTCOME_TONE[outcome] ?? 'neutral'} label={enumLabel(t, 'step.outcome', outcome)} status={outcome} />;
}
