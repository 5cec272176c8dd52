import { useEffect, useState } from 'react';
import type { HotMemory } from '../../../api';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Spinner } from '../../../components/Spinner';
import { useFormat } from '../../../i18n/use-format';
import { useT } from '../../../i18n/use-t';
import { useHotMemoryStore, type MemoryWriteState } from '../../../stores/hot-memory';
import { useRoleIn, WRITER_ROLES } from '../../../stores/project-role';
import { EMPTY_MEMORY_TEMPLATE, usedPercent } from './line-source';
import { MemoryLineItem, MemoryLines } from './MemoryLines';
import { MemoryVersions } from './MemoryVersions';

type Mode = 'lines' | 'markdown' | 'edit';

/** Version, who changed it last, and how full it is against the cap. */
function MemorySummary({ memory }: { memory: HotMemory }) {
  const t = useT();
  const format = useFormat();
  const percent = usedPercent(memory.tokens, memory.maxTokens);
  const tone = memory.tokens > memory.maxTokens ? 'progress-fail' : percent >= 85 ? 'progress-warn' : 'progress-ok';
  return (
    <div className="memory-summary">
      <span className="memory-version" data-testid="memory-version" data-version={memory.version}>
        {memory.version > 0 ? t('memory.version', { version: memory.version }) : t('memory.neverWritten')}
      </span>
      {memory.updatedAt ? (
        <span className="muted small" title={format.dateTime(memory.updatedAt)}>
          {t('memory.updated', { actor: memory.updatedBy, time: format.relative(memory.updatedAt) })}
        </span>
      ) : null}
      <span className="progress memory-tokens" data-testid="memory-tokens" title={t('memory.tokensLabel', { tokens: memory.tokens, maxTokens: memory.maxTokens })}>
        <span
          className="progress-track"
          role="progressbar"
          aria-valuemin={0}
          aria-valuemax={memory.maxTokens}
          aria-valuenow={memory.tokens}
          aria-label={t('memory.tokensLabel', { tokens: memory.tokens, maxTokens: memory.maxTokens })}
        >
          <span className={`progress-seg ${tone}`} style={{ width: `${percent}%` }} />
        </span>
        <span className="progress-text">{t('memory.tokens', { tokens: memory.tokens, maxTokens: memory.maxTokens })}</span>
      </span>
    </div>
  );
}

/** A write that could not be made to fit even after pruning: what the server says, and the lines left out. */
function OverflowAlert({ projectId, overflow }: { projectId: string; overflow: NonNullable<HotMemory['overflow']> }) {
  const t = useT();
  return (
    <div className="alert alert-warning memory-overflow" role="alert" data-testid="memory-overflow">
      <strong className="alert-title">{t('memory.overflowTitle')}</strong>
      <span className="alert-text">{overflow.message}</span>
      {overflow.pendingLines.length > 0 ? (
        <div className="memory-pending">
          <div className="small">{t('memory.overflowPending', { count: overflow.pendingLines.length })}</div>
          <ul className="memory-line-list">
            {overflow.pendingLines.map((line, index) => (
              <MemoryLineItem key={index} projectId={projectId} line={line} />
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}

/** What the last save or restore did: saved as version n, nothing changed, or why it failed. */
function WriteOutcome({ write, action, onReload }: { write: MemoryWriteState; action: 'save' | 'restore'; onReload(): void }) {
  const t = useT();
  switch (write.status) {
    case 'saved': {
      const { result, restoredVersion } = write;
      const message = !result.changed
        ? t('memory.unchanged')
        : restoredVersion
          ? t('memory.restored', { from: restoredVersion, version: result.memory.version })
          : t('memory.saved', { version: result.memory.version });
      return (
        <div className="alert alert-success" role="status" data-testid="memory-saved">
          <span className="alert-text">{message}</span>
          {result.duplicates.length > 0 ? <span className="small">{t('memory.duplicates', { lines: result.duplicates.join('; ') })}</span> : null}
        </div>
      );
    }
    case 'conflict':
      return (
        <div className="alert alert-warning" role="alert" data-testid="memory-conflict">
          <span className="alert-text">{t('memory.conflict')}</span>
          <span className="alert-action">
            <button type="button" className="button button-small" data-testid="memory-reload" onClick={onReload}>
              {t('memory.reload')}
            </button>
          </span>
        </div>
      );
    case 'error':
      return <ErrorAlert error={write.error} title={action === 'restore' ? t('memory.restoreFailed') : t('memory.saveFailed')} testId="memory-save-error" />;
    default:
      return null;
  }
}

/**
 * The project's hot memory: what the assistant always reads. Lines with their sources, the markdown, an editor
 * for writers (saved against the version it opened, so a newer change is never overwritten unseen) and the
 * version history with restore. Viewers read it only.
 */
export function MemoryPage({ projectId }: { projectId: string }) {
  const t = useT();
  const canWrite = WRITER_ROLES.has(useRoleIn(projectId) ?? 'viewer');
  const { memory, isLoading, error, versions, versionsLoaded, versionsError, write, load, save, rollback, clearWrite } = useHotMemoryStore();
  const isCurrent = useHotMemoryStore((state) => state.projectId === projectId);
  const [mode, setMode] = useState<Mode>('lines');
  const [draft, setDraft] = useState('');
  const [baseVersion, setBaseVersion] = useState(0);
  /** The editor's text when a conflict was reloaded, so the change can be made again. */
  const [unsaved, setUnsaved] = useState<string | null>(null);
  const [action, setAction] = useState<'save' | 'restore'>('save');
  const isSaving = write.status === 'saving';

  // A fresh page: the note of a save made on an earlier visit does not come back.
  useEffect(() => {
    useHotMemoryStore.getState().clearWrite();
    void load(projectId);
  }, [load, projectId]);

  function startEditing(current: HotMemory) {
    setDraft(current.content.trim() ? current.content : EMPTY_MEMORY_TEMPLATE);
    setBaseVersion(current.version);
    clearWrite();
    setMode('edit');
  }

  async function saveDraft() {
    setAction('save');
    if (await save(projectId, draft, baseVersion)) {
      setUnsaved(null);
      setMode('lines');
    }
  }

  async function reloadAfterConflict() {
    setUnsaved(draft);
    await load(projectId);
    const latest = useHotMemoryStore.getState().memory;
    clearWrite();
    if (latest) startEditing(latest);
  }

  async function restore(version: number): Promise<boolean> {
    setAction('restore');
    const ok = await rollback(projectId, version);
    if (ok) setMode('lines');
    return ok;
  }

  const shown = isCurrent ? memory : null;

  return (
    <>
      <section className="panel section" aria-labelledby="memory-title" data-testid="memory-page">
        <div className="section-head">
          <div>
            <h2 id="memory-title">{t('memory.title')}</h2>
            <p className="muted small">{t('memory.intro')}</p>
          </div>
          <button type="button" className="button button-small" onClick={() => void load(projectId)} disabled={isLoading || mode === 'edit'}>
            {t('common.refresh')}
          </button>
        </div>

        {error ? <ErrorAlert error={error} /> : null}
        {!shown && isLoading ? <Spinner label={t('common.loading')} /> : null}

        {shown ? (
          <>
            <MemorySummary memory={shown} />
            {shown.overflow ? <OverflowAlert projectId={projectId} overflow={shown.overflow} /> : null}
            {!canWrite ? (
              <p className="muted small" data-testid="memory-read-only">
                {t('memory.readOnly')}
              </p>
            ) : null}
            <WriteOutcome write={write} action={action} onReload={() => void reloadAfterConflict()} />

            <div className="memory-toolbar">
              <div className="segmented" role="tablist">
                {(['lines', 'markdown'] as const).map((view) => (
                  <button
                    key={view}
                    type="button"
                    role="tab"
                    aria-selected={mode === view}
                    className={`button button-small ${mode === view ? 'active' : ''}`}
                    data-testid={`memory-view-${view}`}
                    disabled={mode === 'edit'}
                    onClick={() => setMode(view)}
                  >
                    {t(`memory.view.${view}`)}
                  </button>
                ))}
              </div>
              {canWrite && mode !== 'edit' ? (
                <button type="button" className="button button-small button-primary" data-testid="memory-edit" onClick={() => startEditing(shown)}>
                  {t('memory.edit')}
                </button>
              ) : null}
            </div>

            {mode === 'lines' ? <MemoryLines projectId={projectId} lines={shown.lines} /> : null}
            {mode === 'markdown' ? (
              <pre className="json memory-markdown" data-testid="memory-content">
                {shown.content}
              </pre>
            ) : null}
            {mode === 'edit' ? (
              <form
                className="memory-editor"
                onSubmit={(event) => {
                  event.preventDefault();
                  void saveDraft();
                }}
              >
                <label className="inline-form-label" htmlFor="memory-editor">
                  {t('memory.editorLabel')} · {t('memory.version', { version: baseVersion })}
                </label>
                <p className="muted small">{t('memory.editHint')}</p>
                <textarea
                  id="memory-editor"
                  data-testid="memory-editor"
                  rows={Math.min(30, Math.max(10, draft.split('\n').length + 2))}
                  value={draft}
                  onChange={(event) => setDraft(event.target.value)}
                  spellCheck={false}
                />
                {unsaved !== null && unsaved !== draft ? (
                  <details className="collapsible" data-testid="memory-unsaved">
                    <summary>{t('memory.conflict')}</summary>
                    <pre className="json memory-markdown">{unsaved}</pre>
                  </details>
                ) : null}
                <div className="inline-form-actions">
                  <button type="submit" className="button button-primary" data-testid="memory-save" disabled={isSaving}>
                    {isSaving ? t('common.saving') : t('memory.save')}
                  </button>
                  <button
                    type="button"
                    className="button"
                    data-testid="memory-cancel"
                    disabled={isSaving}
                    onClick={() => {
                      clearWrite();
                      setUnsaved(null);
                      setMode('lines');
                    }}
                  >
                    {t('common.cancel')}
                  </button>
                </div>
              </form>
            ) : null}
          </>
        ) : null}
      </section>

      <section className="panel section" aria-labelledby="memory-versions-title">
        <div className="section-head">
          <h2 id="memory-versions-title">{t('memory.versions')}</h2>
        </div>
        <MemoryVersions
          versions={isCurrent ? versions : []}
          hasLoaded={isCurrent && versionsLoaded}
          error={isCurrent ? versionsError : null}
          currentVersion={shown?.version ?? 0}
          onRestore={canWrite ? restore : undefined}
          isBusy={isSaving}
        />
      </section>
    </>
  );
}
