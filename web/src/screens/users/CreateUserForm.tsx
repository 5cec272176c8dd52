import { useState, type FormEvent } from 'react';
import type { Role } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { ROLES, useUsersStore } from '../../stores/users';

/**
 * Admins: a new user with a role. The server answers with a one-time sign-in link, shown here once (it keeps only a
 * hash): the admin passes it on, the user opens it once and then holds a token of their own that the admin never
 * sees. Trials are opened to them on a trial's Members tab. A new link for an existing user shows here too.
 */
export function CreateUserForm() {
  const t = useT();
  const format = useFormat();
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
          <strong className="alert-title">{t(created.isNew ? 'users.create.done' : 'users.link.done', { name: created.user.name })}</strong>
          <p className="small">{t('users.create.linkOnce', { time: format.dateTime(created.expiresAt) })}</p>
          <code className="token-once" data-testid="user-created-link">
            {created.signInLink}
          </code>
          {created.isNew ? (
            <p className="small">
              {t('users.create.next')} <a href={routes.trial()}>{t('users.create.toTrials')}</a>
            </p>
          ) : null}
          <div className="inline-form-actions">
            <button type="button" className="button button-small" onClick={() => void navigator.clipboard?.writeText(created.signInLink)}>
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
