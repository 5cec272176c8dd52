import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import { useTrialCatalogStore } from '../../../stores/trial-catalog';

/** Admins: a new, empty trial project; its data comes next, on its Import page. */
export function NewTrialForm() {
  const t = useT();
  const createProject = useTrialCatalogStore((state) => state.createProject);
  const [isOpen, setOpen] = useState(false);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [isSaving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setSaving(true);
    setError(null);
    try {
      const projectId = id.trim();
      await createProject(projectId, name.trim());
      setOpen(false);
      setId('');
      setName('');
      window.location.hash = routes.trialImport(projectId);
    } catch (caught) {
      setError(caught);
    } finally {
      setSaving(false);
    }
  }

  if (!isOpen) {
    return (
      <button type="button" className="button" onClick={() => setOpen(true)} data-testid="new-trial">
        {t('trial.newTrial')}
      </button>
    );
  }
  return (
    <form className="inline-form panel" onSubmit={(event) => void submit(event)} data-testid="new-trial-form">
      <label>
        <span className="inline-form-label">{t('trial.newTrial.id')}</span>{' '}
        <input value={id} onChange={(event) => setId(event.target.value)} required pattern="[a-z0-9][a-z0-9_\-]{0,63}" data-testid="new-trial-id" />
        <span className="muted small"> {t('trial.newTrial.idHint')}</span>
      </label>
      <label>
        <span className="inline-form-label">{t('trial.newTrial.name')}</span>{' '}
        <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} data-testid="new-trial-name" />
      </label>
      {error ? <ErrorAlert error={error} testId="new-trial-error" /> : null}
      <div className="inline-form-actions">
        <button type="submit" className="button button-primary" disabled={isSaving || !id.trim() || !name.trim()}>
          {t('trial.newTrial.create')}
        </button>
        <button type="button" className="button button-ghost" onClick={() => setOpen(false)}>
          {t('trial.newTrial.cancel')}
        </button>
      </div>
    </form>
  );
}
