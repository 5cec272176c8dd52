import { useState } from 'react';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { byRecord } from '../record-order';
import { useSkillEditorStore } from './skill-editor-store';

/** Tries the skill in the editor on this trial's records (POST /api/iit/projects/:projectId/skills/dry-run); writes nothing. */
export function SkillDryRun({ projectId }: { projectId: string }) {
  const t = useT();
  const [recordId, setRecordId] = useState('');
  const { dryRun, dryRunError, busy, runDry } = useSkillEditorStore();
  return (
    <section className="panel">
      <p className="muted small">{t('skillEditor.dryRun.hint')}</p>
      <div className="skill-actions">
        <input className="input" value={recordId} placeholder={t('skillEditor.dryRun.record')} aria-label={t('skillEditor.dryRun.record')} onChange={(event) => setRecordId(event.target.value)} />
        <button type="button" className="button" data-testid="skill-dry-run" disabled={busy !== null} onClick={() => void runDry(projectId, recordId)}>
          {t('skillEditor.dryRun')}
        </button>
      </div>
      {dryRunError ? <ErrorAlert error={dryRunError} testId="skill-dry-run-error" /> : null}
      {dryRun ? (
        <div data-testid="skill-dry-run-result" data-fired={dryRun.fired}>
          <p>{t('skillEditor.dryRun.summary', { fired: dryRun.fired, records: dryRun.records })}</p>
          {dryRun.firing.length === 0 ? (
            <p className="muted">{t('skillEditor.dryRun.none')}</p>
          ) : (
            <table className="table small">
              <thead>
                <tr>
                  {(['record', 'event', 'rule', 'field', 'message', 'value'] as const).map((col) => (
                    <th key={col}>{t(`skillEditor.col.${col}`)}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {byRecord(dryRun.firing).map((finding, i) => (
                  <tr key={`${finding.recordId}:${finding.eventName}:${finding.ruleId}:${i}`}>
                    <td>{finding.recordId}</td>
                    <td>{finding.eventName}</td>
                    <td>
                      <code>{finding.ruleId}</code>
                    </td>
                    <td>
                      <code>{finding.field}</code>
                    </td>
                    <td>{finding.message}</td>
                    <td>{finding.value === null || finding.value === undefined ? '' : String(finding.value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      ) : null}
    </section>
  );
}
