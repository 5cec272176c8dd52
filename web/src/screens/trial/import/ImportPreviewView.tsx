import type { ImportPreview, ImportProblem } from '../../../api';
import { useT } from '../../../i18n/use-t';

type Counts = NonNullable<ImportPreview['counts']>;

/** The three row counts of an import, for a message (the summary object is open and may carry more). */
export function recordCounts({ created, updated, unchanged }: Counts['records']) {
  return { created, updated, unchanged };
}

/** What an import would write (counts against what the project holds now), or every problem that refuses it. */
export function ImportPreviewView({ preview }: { preview: ImportPreview }) {
  return preview.counts ? (
    <>
      <PreviewCounts counts={preview.counts} />
      {preview.changes && preview.changes.values.length > 0 ? <ChangeTable changes={preview.changes} /> : null}
    </>
  ) : (
    <ProblemTable preview={preview} />
  );
}

type Changes = NonNullable<ImportPreview['changes']>;

/** The values "changed" rows would change, so a correction import is checked value by value before it is run. */
function ChangeTable({ changes }: { changes: Changes }) {
  const t = useT();
  const shown = (value: Changes['values'][number]['oldValue'], masked: boolean | undefined) =>
    masked ? <span className="muted">{t('trial.import.change.masked')}</span> : value === null || value === '' ? <span className="muted">{t('trial.import.change.blank')}</span> : <code>{String(value)}</code>;
  return (
    <div data-testid="import-changes">
      <h3 className="panel-heading">{t('trial.import.changes', { count: changes.values.length + changes.moreValues })}</h3>
      <div className="table-scroll">
        <table className="table">
          <thead>
            <tr>
              <th>{t('trial.import.col.record')}</th>
              <th>{t('trial.import.col.event')}</th>
              <th>{t('trial.import.col.field')}</th>
              <th>{t('trial.import.col.oldValue')}</th>
              <th>{t('trial.import.col.newValue')}</th>
            </tr>
          </thead>
          <tbody>
            {changes.values.map((change) => (
              <tr key={`${change.recordId}\u0000${change.eventName}\u0000${change.field}`} data-testid="import-change">
                <td className="nowrap">{change.recordId}</td>
                <td>{change.eventName ? <code>{change.eventName}</code> : t('trial.import.classicEvent')}</td>
                <td>
                  <code>{change.field}</code>
                </td>
                <td>{shown(change.oldValue, change.masked)}</td>
                <td>{shown(change.newValue, change.masked)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {changes.moreValues > 0 ? <p className="muted small">{t('trial.import.moreChanges', { count: changes.moreValues })}</p> : null}
    </div>
  );
}

function PreviewCounts({ counts }: { counts: Counts }) {
  const t = useT();
  const changed = (isChanged: boolean) => (
    <span className={`badge ${isChanged ? 'badge-info' : 'badge-neutral'}`}>{t(isChanged ? 'trial.import.changed' : 'trial.import.unchanged')}</span>
  );
  return (
    <div data-testid="import-preview-counts">
      <h3 className="panel-heading">{t('trial.import.counts')}</h3>
      <table className="table">
        <tbody>
          <tr>
            <th>{t('trial.import.count.fields')}</th>
            <td className="num" data-testid="import-count-fields">{counts.fields}</td>
            <td>{changed(counts.isDictionaryChanged)}</td>
          </tr>
          <tr>
            <th>{t('trial.import.count.forms')}</th>
            <td className="num">{counts.forms}</td>
            <td />
          </tr>
          <tr>
            <th>{t('trial.import.count.events')}</th>
            <td className="num">{counts.events}</td>
            <td>{changed(counts.isEventsChanged)}</td>
          </tr>
          <tr>
            <th>{t('trial.import.count.arms')}</th>
            <td className="num">{counts.arms}</td>
            <td>{changed(counts.isArmsChanged)}</td>
          </tr>
          <tr>
            <th>{t('trial.import.count.subjects')}</th>
            <td className="num">{counts.subjects}</td>
            <td />
          </tr>
          <tr>
            <th>{t('trial.import.count.rows')}</th>
            <td className="num" data-testid="import-count-rows">{counts.rows}</td>
            <td data-testid="import-count-records">{t('trial.import.count.records', recordCounts(counts.records))}</td>
          </tr>
        </tbody>
      </table>
      {counts.rowsPerEvent.length > 0 ? (
        <>
          <h3 className="panel-heading">{t('trial.import.rowsPerEvent')}</h3>
          <table className="table" data-testid="import-rows-per-event">
            <tbody>
              {counts.rowsPerEvent.map((event) => (
                <tr key={event.eventName}>
                  <th>{event.eventName ? <code>{event.eventName}</code> : t('trial.import.classicEvent')}</th>
                  <td className="num">{event.rows}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      {counts.warnings.length > 0 ? (
        <div className="alert alert-warning" data-testid="import-warnings">
          <span className="alert-text">
            {t('trial.import.warnings', { count: counts.warnings.length + (counts.moreWarnings ?? 0) })}
            <ul>
              {counts.warnings.map((warning) => (
                <li key={`${warning.line}:${warning.field}`}>{warning.message}</li>
              ))}
            </ul>
          </span>
        </div>
      ) : null}
    </div>
  );
}

function ProblemTable({ preview }: { preview: ImportPreview }) {
  const t = useT();
  const hasElements = preview.problems.some((problem) => problem.element);
  return (
    <div data-testid="import-problems">
      <p className="field-error" role="alert">
        {t('trial.import.problems', { count: preview.problemCount })}
      </p>
      <div className="table-scroll">
        <table className="table">
          <thead>
            <tr>
              <th>{t('trial.import.col.source')}</th>
              <th className="num">{t('trial.import.col.line')}</th>
              {hasElements ? <th>{t('trial.import.col.element')}</th> : null}
              <th>{t('trial.import.col.field')}</th>
              <th>{t('trial.import.col.value')}</th>
              <th>{t('trial.import.col.problem')}</th>
            </tr>
          </thead>
          <tbody>
            {preview.problems.map((problem, index) => (
              <ProblemRow key={index} problem={problem} hasElements={hasElements} />
            ))}
          </tbody>
        </table>
      </div>
      {preview.moreProblems > 0 ? <p className="muted small">{t('trial.import.moreProblems', { count: preview.moreProblems })}</p> : null}
    </div>
  );
}

function ProblemRow({ problem, hasElements }: { problem: ImportProblem; hasElements: boolean }) {
  return (
    <tr className="row-error" data-testid="import-problem">
      <td className="nowrap">{problem.source}</td>
      <td className="num">{problem.line}</td>
      {hasElements ? (
        <td>
          <code>{problem.element ?? ''}</code>
        </td>
      ) : null}
      <td>
        <code>{problem.field}</code>
      </td>
      <td>
        <code>{problem.value}</code>
      </td>
      <td>{problem.problem}</td>
    </tr>
  );
}
