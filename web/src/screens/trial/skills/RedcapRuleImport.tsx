import { useState } from 'react';
import { api } from '../../../api';
import type { ImportRedcapRulesResult } from '../../../api/skills-api';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { importRequest, initialSeverities, SEVERITIES, type RuleSeverity } from './redcap-rule-import';
import { useSkillEditorStore } from './skill-editor-store';

/**
 * Imports a site's REDCap Data Quality rules (the rules export, uploaded or pasted) into the editor as a new skill:
 * Preview lists each rule as it would be imported (its id, field, the arms it applies to) or why not, a severity is
 * picked per rule, and Import puts the skill in the editor, where it is reviewed and saved. Nothing is written until
 * it is saved. For writers of the trial only (the page mounts it for them), as the server requires.
 */
export function RedcapRuleImport({ projectId }: { projectId: string }) {
  const t = useT();
  const [open, setOpen] = useState(false);
  const [csv, setCsv] = useState('');
  const [fileName, setFileName] = useState('');
  const [skillId, setSkillId] = useState('redcap-dq');
  // The skill's name in the language of the console; the id stays one every language can type.
  const [name, setName] = useState(() => t('redcapImport.defaultName'));
  const [preview, setPreview] = useState<ImportRedcapRulesResult | null>(null);
  const [severities, setSeverities] = useState<Record<number, RuleSeverity>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [imported, setImported] = useState<number | null>(null);

  const changed = () => {
    setPreview(null);
    setImported(null);
  };
  const run = async (call: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await call();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const runPreview = () =>
    run(async () => {
      const result = await api.skills.importRedcapRules(projectId, { csv, skillId, name, preview: true });
      setPreview(result);
      setSeverities(initialSeverities(result));
      setImported(null);
    });
  const runImport = () =>
    run(async () => {
      if (!preview) return;
      const result = await api.skills.importRedcapRules(projectId, importRequest(preview, severities, { skillId, name }));
      if (result.yaml !== undefined) useSkillEditorStore.getState().setText(result.yaml);
      setImported(result.imported);
      setPreview(null);
    });

  if (!open) {
    return (
      <div className="skill-actions">
        <button type="button" className="button" data-testid="redcap-import-open" onClick={() => setOpen(true)}>
          {t('redcapImport.open')}
        </button>
      </div>
    );
  }
  return (
    <section className="panel" data-testid="redcap-import">
      <h3>{t('redcapImport.title')}</h3>
      <p className="muted small">{t('redcapImport.hint')}</p>
      <div className="skill-actions">
        <label className="small">
          {t('redcapImport.skillId')}{' '}
          <input className="input" value={skillId} data-testid="redcap-import-skill-id" onChange={(event) => { setSkillId(event.target.value); changed(); }} />
        </label>
        <label className="small">
          {t('redcapImport.name')}{' '}
          <input className="input" value={name} data-testid="redcap-import-name" onChange={(event) => { setName(event.target.value); changed(); }} />
        </label>
      </div>
      <div className="skill-actions">
        <label className="small">
          {t('redcapImport.file')}{' '}
          <input
            type="file"
            accept=".csv,text/csv,text/plain"
            data-testid="redcap-import-file"
            onChange={(event) => {
              const file = event.target.files?.[0];
              if (!file) return;
              void file.text().then((text) => {
                setCsv(text);
                setFileName(file.name);
                changed();
              });
            }}
          />
        </label>
        {fileName ? <span className="muted small">{fileName}</span> : null}
      </div>
      <textarea
        className="input redcap-import-csv"
        rows={6}
        value={csv}
        placeholder={'rule_name,rule_logic,real_time_execution\n"Age under 18","[age] < 18",n'}
        aria-label={t('redcapImport.paste')}
        data-testid="redcap-import-csv"
        onChange={(event) => {
          setCsv(event.target.value);
          setFileName('');
          changed();
        }}
      />
      <div className="skill-actions">
        <button type="button" className="button" data-testid="redcap-import-preview" disabled={busy || !csv.trim() || !skillId || !name} onClick={() => void runPreview()}>
          {t('redcapImport.preview')}
        </button>
        <button type="button" className="button button-primary" data-testid="redcap-import-run" disabled={busy || !preview || preview.imported === 0} onClick={() => void runImport()}>
          {t('redcapImport.import', { count: preview?.imported ?? 0 })}
        </button>
        <button type="button" className="button" onClick={() => setOpen(false)}>
          {t('redcapImport.close')}
        </button>
      </div>
      {error ? <ErrorAlert error={error} testId="redcap-import-error" /> : null}
      {imported !== null ? (
        <p className="alert alert-success" role="status" data-testid="redcap-import-done">
          {t('redcapImport.done', { count: imported })}
        </p>
      ) : null}
      {preview ? <RuleTable preview={preview} severities={severities} onSeverity={(position, severity) => setSeverities({ ...severities, [position]: severity })} /> : null}
    </section>
  );
}

function RuleTable({ preview, severities, onSeverity }: { preview: ImportRedcapRulesResult; severities: Record<number, RuleSeverity>; onSeverity: (position: number, severity: RuleSeverity) => void }) {
  const t = useT();
  const fileProblems = preview.problems.filter((problem) => !preview.rules.some((rule) => rule.name === problem.rule));
  return (
    <div data-testid="redcap-import-rules" data-importable={preview.imported}>
      <p>{t('redcapImport.summary', { importable: preview.imported, total: preview.rules.length })}</p>
      {fileProblems.map((problem) => (
        <p key={`${problem.rule}:${problem.message}`} className="alert alert-warning small">
          {problem.message}
        </p>
      ))}
      <table className="table small">
        <thead>
          <tr>
            {(['line', 'rule', 'logic', 'status', 'appliesTo', 'severity'] as const).map((col) => (
              <th key={col}>{t(`redcapImport.col.${col}`)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {preview.rules.map((rule) => (
            <tr key={rule.position} data-testid={`redcap-import-rule-${rule.position}`} data-status={rule.status}>
              <td>{rule.line ?? rule.position}</td>
              <td>
                {rule.name}
                {rule.ruleId ? (
                  <>
                    <br />
                    <code className="muted">{rule.ruleId}</code>
                  </>
                ) : null}
              </td>
              <td>
                <code>{rule.logic}</code>
              </td>
              <td>
                {rule.status === 'importable' ? (
                  <span className="badge badge-ok">{t('redcapImport.importable')}</span>
                ) : (
                  <>
                    <span className="badge badge-fail">{t('redcapImport.refused')}</span> {rule.reason}
                  </>
                )}
              </td>
              <td>{rule.status !== 'importable' ? '' : rule.arms ? t('redcapImport.arms', { arms: rule.arms.join(', '), count: rule.arms.length }) : t('redcapImport.allSubjects')}</td>
              <td>
                {rule.status === 'importable' ? (
                  <select
                    className="input"
                    aria-label={t('redcapImport.col.severity')}
                    data-testid={`redcap-import-severity-${rule.position}`}
                    value={severities[rule.position] ?? rule.severity ?? 'error'}
                    onChange={(event) => onSeverity(rule.position, event.target.value as RuleSeverity)}
                  >
                    {SEVERITIES.map((severity) => (
                      <option key={severity} value={severity}>
                        {t(`redcapImport.severity.${severity}`)}
                      </option>
                    ))}
                  </select>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
