import { Fragment, useState } from 'react';
import type { HotMemoryVersion } from '../../../api';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Spinner } from '../../../components/Spinner';
import { useFormat } from '../../../i18n/use-format';
import { useT } from '../../../i18n/use-t';
import { enumLabel } from '../labels';

interface MemoryVersionsProps {
  versions: HotMemoryVersion[];
  hasLoaded: boolean;
  error: unknown;
  currentVersion: number;
  /** Absent for viewers: no Restore button. */
  onRestore?(version: number): Promise<boolean>;
  isBusy: boolean;
}

/** Every saved version, newest first: how it was written, by whom and why; View shows it, Restore brings it back as a new version. */
export function MemoryVersions({ versions, hasLoaded, error, currentVersion, onRestore, isBusy }: MemoryVersionsProps) {
  const t = useT();
  const format = useFormat();
  const [viewing, setViewing] = useState<number | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);

  if (error) return <ErrorAlert error={error} />;
  if (!hasLoaded) return <Spinner label={t('common.loading')} />;
  if (versions.length === 0) return <p className="muted small">{t('memory.versionsEmpty')}</p>;

  return (
    <div className="table-scroll">
      <table className="table memory-versions" data-testid="memory-versions">
        <thead>
          <tr>
            <th>{t('memory.col.version')}</th>
            <th>{t('memory.col.path')}</th>
            <th>{t('memory.col.actor')}</th>
            <th>{t('memory.col.reason')}</th>
            <th>{t('memory.col.time')}</th>
            <th className="num">{t('memory.col.tokens')}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {versions.map((version) => {
            const isCurrent = version.version === currentVersion;
            return (
              <Fragment key={version.version}>
                <tr data-testid="memory-version-row" data-version={version.version}>
                  <td className="nowrap">
                    {t('record.version', { version: version.version })}
                    {isCurrent ? <span className="tag">{t('memory.current')}</span> : null}
                  </td>
                  <td>{enumLabel(t, 'memory.path', version.path)}</td>
                  <td>{version.actor}</td>
                  <td>{version.reason}</td>
                  <td className="nowrap" title={format.dateTime(version.createdAt)}>
                    {format.dateTime(version.createdAt)}
                  </td>
                  <td className="num">{version.tokens}</td>
                  <td className="nowrap">
                    <div className="row-actions">
                      <button
                        type="button"
                        className="button button-small"
                        data-testid="memory-version-view"
                        aria-expanded={viewing === version.version}
                        onClick={() => setViewing(viewing === version.version ? null : version.version)}
                      >
                        {viewing === version.version ? t('memory.hide') : t('memory.view')}
                      </button>
                      {onRestore && !isCurrent ? (
                        <button
                          type="button"
                          className="button button-small"
                          data-testid="memory-version-restore"
                          disabled={isBusy}
                          onClick={() => setConfirming(version.version)}
                        >
                          {t('memory.restore')}
                        </button>
                      ) : null}
                    </div>
                  </td>
                </tr>
                {confirming === version.version && onRestore ? (
                  <tr className="row-detail">
                    <td colSpan={7}>
                      <div className="alert alert-warning" role="alertdialog" data-testid="memory-restore-confirm">
                        <span className="alert-text">{t('memory.restoreConfirm', { version: version.version })}</span>
                        <span className="alert-action row-actions">
                          <button
                            type="button"
                            className="button button-small button-primary"
                            data-testid="memory-restore-yes"
                            disabled={isBusy}
                            onClick={() => void onRestore(version.version).then((ok) => ok && setConfirming(null))}
                          >
                            {isBusy ? t('common.saving') : t('memory.restoreYes')}
                          </button>
                          <button type="button" className="button button-small" onClick={() => setConfirming(null)} disabled={isBusy}>
                            {t('common.cancel')}
                          </button>
                        </span>
                      </div>
                    </td>
                  </tr>
                ) : null}
                {viewing === version.version ? (
                  <tr className="row-detail">
                    <td colSpan={7}>
                      <pre className="json memory-markdown" data-testid="memory-version-content">
                        {version.content}
                      </pre>
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
