import { useEffect, useState, type FormEvent } from 'react';
import type { ManagedUser, ProjectMember, ProjectRole } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useProjectMembersStore } from '../../stores/project-members';
import { useSessionStore } from '../../stores/session';
import { useUsersStore } from '../../stores/users';

/** The roles a member can have in one trial (admin is platform-wide), as the API takes them. */
const PROJECT_ROLES: readonly ProjectRole[] = ['pi', 'data_manager', 'coordinator', 'viewer'];
import './users.css';

/**
 * A trial's Members tab: who may open this trial's data, with what role, and who sees identifier fields. It sits
 * on the trial because that is where a PI looks for "who is on my study"; admins add, remove and grant here, the
 * trial's PI reads. Creating a user is on the Users page, which this links to.
 */
export function ProjectMembersPage({ projectId }: { projectId: string }) {
  const t = useT();
  const isAdmin = useSessionStore((state) => state.user?.role === 'admin');
  const { members, hasLoaded, isLoading, error, changeError, load, dismissError } = useProjectMembersStore();
  const shown = useProjectMembersStore((state) => state.projectId === projectId);

  useEffect(() => {
    void load(projectId);
  }, [load, projectId]);

  return (
    <section className="section" aria-labelledby="members-title">
      <div className="section-head">
        <div>
          <h2 id="members-title">{t('members.title')}</h2>
          <p className="muted small">{t('members.intro')}</p>
        </div>
        <button type="button" className="button button-small" onClick={() => void load(projectId)} disabled={isLoading}>
          {t('common.refresh')}
        </button>
      </div>
      {isAdmin ? <AddMemberForm projectId={projectId} members={shown ? members : []} /> : null}
      {changeError ? (
        <ErrorAlert
          error={changeError}
          title={t('members.changeFailed')}
          testId="member-change-error"
          action={
            <button type="button" className="button button-small button-ghost" onClick={dismissError}>
              {t('common.dismiss')}
            </button>
          }
        />
      ) : null}
      {error ? <ErrorAlert error={error} /> : null}
      {!hasLoaded && isLoading ? <Spinner label={t('common.loading')} /> : null}
      {shown && hasLoaded ? (
        members.length === 0 ? (
          <p className="empty panel" data-testid="members-empty">{t('members.empty')}</p>
        ) : (
          <div className="table-scroll panel">
            <table className="table" data-testid="members-table">
              <thead>
                <tr>
                  <th>{t('users.name')}</th>
                  <th>{t('users.role')}</th>
                  <th>{t('members.identifiers')}</th>
                  <th>{t('members.added')}</th>
                  {isAdmin ? <th /> : null}
                </tr>
              </thead>
              <tbody>
                {members.map((member) => (
                  <MemberRow key={member.userId} projectId={projectId} member={member} isAdmin={isAdmin} />
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : null}
    </section>
  );
}

function MemberRow({ projectId, member, isAdmin }: { projectId: string; member: ProjectMember; isAdmin: boolean }) {
  const t = useT();
  const format = useFormat();
  const isSaving = useProjectMembersStore((state) => Boolean(state.saving[member.userId]));
  const { remove, setIdentifierAccess, setRole } = useProjectMembersStore();
  // Admins and PIs see identifiers by their role; the per-trial grant only matters for coordinators and viewers.
  const isByRole = member.role === 'admin' || member.role === 'pi';

  return (
    <tr data-testid="member-row" data-user-name={member.name} data-role={member.role} data-sees-identifiers={member.seesIdentifiers ? 'true' : 'false'}>
      <td>
        {member.name}
        {member.deactivatedAt ? <span className="muted small"> {t('members.deactivated')}</span> : null}
      </td>
      <td>
        {isAdmin && member.platformRole !== 'admin' ? (
          <select
            value={member.projectRole ?? ''}
            disabled={isSaving}
            onChange={(event) => void setRole(projectId, member.userId, (event.target.value || null) as ProjectRole | null)}
            data-testid="member-role"
            aria-label={t('members.roleInTrial', { name: member.name })}
          >
            <option value="">{t('members.platformRole', { role: t(`users.role.${member.platformRole}`) })}</option>
            {PROJECT_ROLES.map((option) => (
              <option key={option} value={option}>
                {t(`users.role.${option}`)}
              </option>
            ))}
          </select>
        ) : (
          <>
            {t(`users.role.${member.role}`)}
            {member.projectRole ? <span className="muted small"> {t('members.inThisTrial')}</span> : null}
          </>
        )}
      </td>
      <td>
        {isByRole ? (
          <span className="muted small">{t('members.identifiersByRole')}</span>
        ) : (
          <label className="small">
            <input
              type="checkbox"
              data-testid="member-identifiers-toggle"
              checked={member.canViewIdentifiers}
              disabled={!isAdmin || isSaving}
              onChange={(event) => void setIdentifierAccess(projectId, member.userId, event.target.checked)}
            />{' '}
            {member.canViewIdentifiers ? t('members.identifiersShown') : t('members.identifiersMasked')}
          </label>
        )}
      </td>
      <td className="nowrap">{format.dateTime(member.addedAt)}</td>
      {isAdmin ? (
        <td className="nowrap">
          <button
            type="button"
            className="button button-small button-danger"
            data-testid="member-remove"
            disabled={isSaving}
            onClick={() => {
              if (window.confirm(t('members.removeConfirm', { name: member.name }))) void remove(projectId, member.userId);
            }}
          >
            {t('members.remove')}
          </button>
        </td>
      ) : null}
    </tr>
  );
}

/**
 * Adds a user to the trial, with their platform role or a role for this trial only (a coordinator elsewhere who only
 * reads here, a viewer who coordinates this one).
 */
function AddMemberForm({ projectId, members }: { projectId: string; members: ProjectMember[] }) {
  const t = useT();
  const { users, hasLoaded, load: loadUsers } = useUsersStore();
  const add = useProjectMembersStore((state) => state.add);
  const [userId, setUserId] = useState('');
  const [role, setRoleChoice] = useState<ProjectRole | ''>('');
  const [isSaving, setSaving] = useState(false);

  useEffect(() => {
    if (!hasLoaded) void loadUsers();
  }, [hasLoaded, loadUsers]);

  const memberIds = new Set(members.map((member) => member.userId));
  const candidates = users.filter((user) => !memberIds.has(user.id) && user.deactivatedAt === null);
  const chosen: ManagedUser | undefined = candidates.find((user) => user.id === userId);
  // An admin has every right in every trial: no trial role to pick.
  const mayPickRole = chosen !== undefined && chosen.role !== 'admin';

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!chosen) return;
    setSaving(true);
    try {
      if (await add(projectId, chosen.id, mayPickRole && role ? role : undefined)) {
        setUserId('');
        setRoleChoice('');
      }
    } finally {
      setSaving(false);
    }
  }

  return (
    <form className="inline-form member-add-form panel" onSubmit={(event) => void submit(event)} data-testid="member-add-form">
      <label>
        <span className="inline-form-label">{t('members.addUser')}</span>{' '}
        <select
          value={userId}
          onChange={(event) => {
            setUserId(event.target.value);
            setRoleChoice('');
          }}
          data-testid="member-add-user"
        >
          <option value="">{t('members.pickUser')}</option>
          {candidates.map((user) => (
            <option key={user.id} value={user.id}>
              {user.name} ({t(`users.role.${user.role}`)})
            </option>
          ))}
        </select>
      </label>
      <label>
        <span className="inline-form-label">{t('members.roleHere')}</span>{' '}
        <select value={role} onChange={(event) => setRoleChoice(event.target.value as ProjectRole | '')} disabled={!mayPickRole} data-testid="member-add-role">
          <option value="">{chosen ? t('members.platformRole', { role: t(`users.role.${chosen.role}`) }) : '—'}</option>
          {mayPickRole
            ? PROJECT_ROLES.map((option) => (
                <option key={option} value={option}>
                  {t(`users.role.${option}`)}
                </option>
              ))
            : null}
        </select>
      </label>
      <button type="submit" className="button button-primary" disabled={!chosen || isSaving} data-testid="member-add">
        {t('members.add')}
      </button>
      <p className="muted small">
        {t('members.newUserHint')} <a href={routes.users()}>{t('members.toUsers')}</a>
      </p>
    </form>
  );
}
