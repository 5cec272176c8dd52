import type { AuditEntry } from '../../api';
import type { Translate } from '../../i18n/translate';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { summarizeAudit } from './audit-changes';
import { enumLabel } from './labels';

/** A step a worker executed: `node:<node id>:<outcome>`, e.g. node:ranges:fail. */
const NODE_STEP = /^node:(.+):([a-z_]+)$/;

function actionLabel(t: Translate, action: string): string {
  const step = NODE_STEP.exec(action);
  if (step?.[1] && step[2]) return t('audit.action.nodeStep', { node: step[1], outcome: enumLabel(t, 'step.outcome', step[2]) });
  return enumLabel(t, 'audit.action', action);
}

/** Large creations (a whole record) list their values folded, so the trail stays scannable. */
const MAX_INLINE_CHANGES = 6;

function ChangeList({ entry }: { entry: AuditEntry }) {
  const t = useT();
  const { eventName, changes } = summarizeAudit(entry.oldValue, entry.newValue);
  // A creation has no old value: list what was set, without a column of "(blank) ->".
  const isCreation = entry.oldValue === null || entry.oldValue === undefined;
  if (changes.length === 0 && !eventName) return null;
  const rows = (
    <ul className="audit-changes">
      {changes.map((change) => (
        <li key={change.key}>
          <code className="audit-key">{change.key}</code>
          {isCreation ? null : (
            <>
              <span className={change.before ? 'audit-old' : 'audit-blank'}>{change.before || t('audit.empty')}</span>
              <span className="audit-arrow" aria-label={t('audit.changedTo')}>
                →
              </span>
            </>
          )}
          <span className="audit-new">{change.after || t('audit.empty')}</span>
        </li>
      ))}
    </ul>
  );
  return (
    <div className="audit-body">
      {eventName ? <span className="muted small">{t('audit.event', { event: eventName })}</span> : null}
      {changes.length > MAX_INLINE_CHANGES ? (
        <details className="collapsible">
          <summary>{t('audit.changes', { count: changes.length })}</summary>
          {rows}
        </details>
      ) : (
        rows
      )}
    </div>
  );
}

/** Who did what, when and why, with old -> new values; newest first, as an inspector reads a trail. */
export function AuditTrail({ entries, testId }: { entries: AuditEntry[]; testId?: string }) {
  const t = useT();
  const format = useFormat();
  if (entries.length === 0) return <p className="muted small">{t('audit.none')}</p>;
  const newestFirst = [...entries].sort((a, b) => b.at.localeCompare(a.at) || b.id - a.id);
  return (
    <ol className="audit-trail">
      {newestFirst.map((entry) => (
        <li key={entry.id} className="audit-entry" data-testid={testId}>
          <div className="audit-head">
            <strong>{actionLabel(t, entry.action)}</strong>
            <span className="muted small">
              {t('audit.by', { actor: entry.actor })} · {format.dateTime(entry.at)}
            </span>
          </div>
          <ChangeList entry={entry} />
          {entry.reason ? <p className="audit-reason small">{t('audit.reason', { reason: entry.reason })}</p> : null}
        </li>
      ))}
    </ol>
  );
}
