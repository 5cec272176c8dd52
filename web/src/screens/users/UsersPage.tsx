import { Fragment, useEffect, useState } from 'react';
import type { ManagedUser, Role } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { useSessionStore } from '../../stores/session';
import { ROLES, useUsersStore } from '../../stores/users';
import { TokenTable } from '../account/TokenTable';
import { CreateUserForm } from './CreateUserForm';
import './users.css';

/** Admins: every user with their role and state; create a user, change a role, deactivate or reactivate, revoke any token. */
export function UsersPage() {
  const t = useT();
  const me = useSessionStore((state) => state.user);
  const { users, hasLoaded, isLoading, error, load } = useUsersStore();

  useEffect(() => {
    if (me?.role === 'admin') void load();
  }, [load, me?.role]);

  if (me?.role !== 'admin') {
    return (
      <main className="page">
        <p className="empty" data-testid="users-admin-only">{t('users.adminOnly')}</p>
      </main>
    );
  }

  return (
    <main className="page">
      <div className="page-head">
        <div>
          <h1>{t('users.title')}</h1>
          <p className="muted">{t('users.intro')}</p>
        </div>
        <div className="page-actions">
          <button type="button" className="button button-small" onClick={() => void load()} disabled={isLoading}>
            {t('common.refresh')}
          </button>
        </div>
      </div>
      <CreateUserForm />
      <section className="panel section">
        {error ? <ErrorAlert error={error} /> : null}
        {!hasLoaded && isLoading ? <Spinner label={t('common.loading')} /> : null}
        {hasLoaded ? (
          <div className="table-scroll">
            <table className="table" data-testid="users-table">
              <thead>
                <tr>
                  <th>{t('users.name')}</th>
                  <th>{t('users.role')}</th>
                  <th>{t('users.state')}</th>
                  <th>{t('users.created')}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {users.map((user) => (
                  <UserRow key={user.id} user={user} isMe={user.id === me.id} />
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </main>
  );
}

function UserRow({ user, isMe }: { user: ManagedUser; isMe: boolean }) {
  const t = useT();
  const format = useFormat();
  const [showTokens, setShowTokens] = useState(false);
  const isSaving = useUsersStore((state) => Boolean(state.saving[user.id]));
  const changeError = useUsersStore((state) => (state.changeError?.userId === user.id ? state.changeError.error : null));
  const { setRole, setActive, dismissError, issueLink } = useUsersStore();
  const isActive = user.deactivatedAt === null;

  return (
    <Fragment>
      <tr data-testid="user-row" data-user-name={user.name} data-state={isActive ? 'active' : 'deactivated'}>
        <td>
          {user.name}
          {isMe ? <span className="muted small"> {t('users.you')}</span> : null}
        </td>
        <td>
          <select
            aria-label={t('users.roleOf', { name: user.name })}
            data-testid="user-role"
            value={user.role}
            disabled={isSaving}
            onChange={(event) => void setRole(user.id, event.target.value as Role)}
          >
            {ROLES.map((role) => (
              <option key={role} value={role}>
                {t(`users.role.${role}`)}
              </option>
            ))}
          </select>
        </td>
        <td>
          <span className={`badge ${isActive ? 'badge-ok' : 'badge-neutral'}`} data-testid="user-state">
            {isActive ? t('users.active') : t('users.deactivatedSince', { time: format.dateTime(user.deactivatedAt) })}
          </span>
        </td>
        <td className="nowrap">{format.dateTime(user.createdAt)}</td>
        <td className="nowrap">
          <button type="button" className="button button-small" data-testid="user-tokens-toggle" aria-expanded={showTokens} onClick={() => setShowTokens(!showTokens)}>
            {showTokens ? t('users.hideTokens') : t('users.showTokens')}
          </button>{' '}
          {isActive ? (
            <>
              <button type="button" className="button button-small" data-testid="user-sign-in-link" disabled={isSaving} onClick={() => void issueLink(user.id)}>
                {t('users.link.issue')}
              </button>{' '}
            </>
          ) : null}
          <button
            type="button"
            className={`button button-small ${isActive ? 'button-danger' : ''}`}
            data-testid={isActive ? 'user-deactivate' : 'user-reactivate'}
            disabled={isSaving}
            onClick={() => void setActive(user.id, !isActive)}
          >
            {isActive ? t('users.deactivate') : t('users.reactivate')}
          </button>
        </td>
      </tr>
      {changeError ? (
        <tr>
          <td colSpan={5}>
            <ErrorAlert
              error={changeError}
              title={t('users.changeFailed')}
              testId="user-change-error"
              action={
                <button type="button" className="button button-small button-ghost" onClick={dismissError}>
                  {t('common.dismiss')}
                </button>
              }
            />
          </td>
        </tr>
      ) : null}
      {showTokens ? (
        <tr>
          <td colSpan={5}>
            <TokenTable userId={user.id} />
          </td>
        </tr>
      ) : null}
    </Fragment>
  );
}
