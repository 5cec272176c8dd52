import { useState, type FormEvent } from 'react';
import type { Role } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { ROLES, useUsersStore } from '../../stores/users';

/**
 * Admins: a new user with a role. The server answers with their first token, shown here once (it keeps only a
 * hash): the admin passes it on, and the user signs in with it. Trials are opened to them on a trial's Members tab.
 */
export function CreateUserForm() {
  const t = useT();
  const { create, isCreating, createError, created, dismissCreated } = useUsersStore();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('coordinator');

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (await create(name.trim(), role)) setName('');
  }

  return (
    <section className="panel section" aria-labelledby="user-create-title">
      <h2 id="user-create-title" className="panel-heading">{t('users.create.title')}</h2>
      <form className="inline-form" onSubmit={(event) => void submit(event)} data-testid="user-create-form">
        <label>
          <span className="inline-form-label">{t('users.name')}</span>{' '}
          <input type="text" value={name} onChange={(event) => setName(event.target.value)} required maxLength={100} data-testid="user-create-name" />
        </label>
        <label>
          <span className="inline-form-label">{t('users.role')}</span>{' '}
          <select value={role} onChange={(event) => setRole(event.target.value as Role)} data-testid="user-create-role">
            {ROLES.map((option) => (
              <option key={option} value={option}>
                {t(`users.role.${option}`)}
              </option>
            ))}
          </select>
        </label>
        {createError ? <ErrorAlert error={createError} title={t('users.create.failed')} testId="user-create-error" /> : null}
        <div className="inline-form-actions">
          <button type="submit" className="button button-primary" disabled={isCreating || !name.trim()} data-testid="user-create">
            {t('users.create.submit')}
          </button>
        </div>
      </form>
      {created ? (
        <div className="alert" role="status" data-testid="user-created">
          <strong className="alert-title">{t('users.create.done', { name: created.user.name })}</strong>
          <p className="small">{t('users.create.tokenOnce')}</p>
          <code className="token-once" data-testid="user-created-token">
            {created.token}
          </code>
          <p className="small">
            {t('users.create.next')} <a href={routes.trial()}>{t('users.create.toTrials')}</a>
          </p>
          <div className="inline-form-actions">
            <button type="button" className="button button-small" onClick={() => void navigator.clipboard?.writeText(created.token)}>
              {t('users.create.copy')}
            </button>
            <button type="button" className="button button-small button-ghost" onClick={dismissCreated}>
              {t('common.dismiss')}
            </button>
          </div>
        </div>
      ) : null}
    </section>
  );
}
