import { useEffect } from 'react';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Spinner } from '../../../components/Spinner';
import type { MessageKey } from '../../../i18n/en';
import { useT } from '../../../i18n/use-t';
import { FORMAT_PARTS, missingParts, type ImportFormat, type ImportPart } from '../../../stores/import-files';
import { canImport, canPreview, useTrialImportStore } from '../../../stores/trial-import';
import { ImportPreviewView, recordCounts } from './ImportPreviewView';

const FORMATS: ImportFormat[] = ['csv', 'odm'];
const partLabel = (part: ImportPart) => `trial.import.part.${part}` as MessageKey;

/** Import a project's data: choose the export's files, preview what would be written, then import it. */
export function ImportPage({ projectId }: { projectId: string }) {
  const t = useT();
  const state = useTrialImportStore();
  const { format, files, preview, summary, isPreviewing, isImporting, error } = state;

  useEffect(() => {
    useTrialImportStore.getState().open(projectId);
  }, [projectId]);

  const missing = missingParts(format, files);
  return (
    <section className="panel section" aria-labelledby="import-title">
      <div className="section-head">
        <div>
          <h2 id="import-title">{t('trial.tab.import')}</h2>
          <p className="muted small">{t('trial.import.intro')}</p>
        </div>
      </div>

      <fieldset className="inline-form">
        <legend className="inline-form-label">{t('trial.import.format')}</legend>
        {FORMATS.map((item) => (
          <label key={item}>
            <input type="radio" name="import-format" value={item} checked={format === item} onChange={() => state.setFormat(item)} data-testid={`import-format-${item}`} />{' '}
            {t(`trial.import.format.${item}`)}
          </label>
        ))}
      </fieldset>

      <div className="inline-form" key={format}>
        {FORMAT_PARTS[format].map(({ part, isRequired, accept }) => (
          <label key={part}>
            <span className="inline-form-label">
              {t(partLabel(part))}
              {isRequired ? null : <span className="muted small"> ({t('trial.import.optional')})</span>}
            </span>{' '}
            <input type="file" accept={accept} data-testid={`import-file-${part}`} onChange={(event) => state.setFile(part, event.target.files?.[0] ?? null)} />
          </label>
        ))}
        {missing.length > 0 ? <p className="muted small">{t('trial.import.missing', { parts: missing.map((part) => t(partLabel(part))).join(', ') })}</p> : null}
        <div className="inline-form-actions">
          <button type="button" className="button" onClick={() => void state.runPreview()} disabled={!canPreview(state)} data-testid="import-preview">
            {t('trial.import.preview')}
          </button>
          <button type="button" className="button button-primary" onClick={() => void state.runImport()} disabled={!canImport(state)} data-testid="import-run">
            {t('trial.import.import')}
          </button>
        </div>
      </div>

      {isPreviewing ? <Spinner label={t('trial.import.previewing')} /> : null}
      {isImporting ? <Spinner label={t('trial.import.importing')} /> : null}
      {error ? <ErrorAlert error={error} testId="import-error" /> : null}
      {summary ? (
        <div className="alert alert-success" role="status" data-testid="import-done">
          <span className="alert-text">{t('trial.import.done', recordCounts(summary.records))}</span>
        </div>
      ) : null}
      {preview && !summary ? (
        <>
          <p className={preview.importable ? 'muted small' : 'field-error'} data-testid="import-verdict">
            {t(preview.importable ? 'trial.import.ready' : 'trial.import.importBlocked')}
          </p>
          <ImportPreviewView preview={preview} />
        </>
      ) : null}
    </section>
  );
}
