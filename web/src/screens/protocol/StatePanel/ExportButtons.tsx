import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { useProtocolAgentStore } from '../../../stores/protocol-agent';

/** The draft as a file: Markdown to read or diff, DOCX for the ethics committee's template. */
export function ExportButtons() {
  const t = useT();
  const exporting = useProtocolAgentStore((state) => state.exporting);
  const exportError = useProtocolAgentStore((state) => state.exportError);
  const download = useProtocolAgentStore((state) => state.download);
  return (
    <section className="protocol-section" aria-labelledby="export-title">
      <h3 id="export-title">{t('protocol.export.title')}</h3>
      <div className="page-actions">
        <button type="button" className="button button-small" onClick={() => void download('md')} disabled={exporting !== null}>
          {t('protocol.export.md')}
        </button>
        <button type="button" className="button button-small" onClick={() => void download('docx')} disabled={exporting !== null}>
          {t('protocol.export.docx')}
        </button>
      </div>
      {exporting ? <p className="muted small">{t('protocol.export.downloading')}</p> : null}
      {exportError ? <ErrorAlert error={exportError} title={t('protocol.export.failed')} /> : null}
    </section>
  );
}
