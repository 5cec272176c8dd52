import { ClinAgentError } from '../errors.js';
import type { MembershipCheck } from './membership.js';
import type { Role } from '../db/schema/auth.js';
import { QUERY_CLOSER_ROLES, WRITER_ROLES, type User } from './users.js';

/*
 * Who may read and change a project's data, checked by the library functions that touch it (trial QC today,
 * project memory and the protocol agent next) rather than by each route: a route, a CLI command or an agent tool
 * that forgets a check then cannot leak or change anything. Admins belong to every project.
 */

/** Project data is per project: a user outside the project sees nothing of it, not even that it exists. */
export async function assertProjectReader(users: MembershipCheck, actor: User, projectId: string): Promise<void> {
  if (!(await users.isMember(projectId, actor))) {
    throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist or you are not a member. Ask a trial admin to add you.`, { projectId });
  }
}

/**
 * A member who may change the project's data: any role in the project but viewer (a member's role may differ per
 * project: MembershipCheck.roleIn). Non-members get NOT_FOUND, as for a read.
 */
export async function assertProjectWriter(users: MembershipCheck, actor: User, projectId: string): Promise<void> {
  const role = await assertProjectRole(users, actor, projectId);
  if (!WRITER_ROLES.has(role)) throw readOnly(role, projectId);
}

function readOnly(role: Role, projectId: string): ClinAgentError {
  return new ClinAgentError('FORBIDDEN', `Your role "${role}" can only read in project "${projectId}". Ask an admin for the coordinator, data manager or PI role in this project to make changes.`, { role, projectId, needs: [...WRITER_ROLES] });
}

/**
 * Closing or reopening a data query is data management's decision, not the site's: admins, the trial's PI and its
 * data managers. A coordinator answers the query; a viewer only reads. Non-members get NOT_FOUND, as for a read.
 * `what` names the move in the refusal ("close queries", "reopen a query").
 */
export async function assertQueryCloser(users: MembershipCheck, actor: User, projectId: string, what: string): Promise<Role> {
  const role = await assertProjectRole(users, actor, projectId);
  // A viewer hears what they hear for every change: they only read.
  if (!WRITER_ROLES.has(role)) throw readOnly(role, projectId);
  if (!QUERY_CLOSER_ROLES.has(role)) {
    const site = role === 'coordinator' ? ' The site answers queries (mark one answered with what was found); ' : ' ';
    throw new ClinAgentError(
      'FORBIDDEN',
      `Only a data manager, the PI or an admin may ${what} in project "${projectId}"; your role there is "${role}".${site}ask the trial's data manager or PI to decide it, or an admin for the data_manager role.`,
      { role, projectId, needs: [...QUERY_CLOSER_ROLES] },
    );
  }
  return role;
}

/** The actor's role in the project (admin, the member's project role, or their platform role); NOT_FOUND for a non-member. */
export async function assertProjectRole(users: MembershipCheck, actor: User, projectId: string): Promise<Role> {
  const role = await users.roleIn(projectId, actor);
  if (!role) {
    throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist or you are not a member. Ask a trial admin to add you.`, { projectId });
  }
  return role;
}

/** Viewers read only; the same answer whether a route or the library refuses the change. */
export function assertWriterRole(actor: Pick<User, 'role'>): void {
  if (!WRITER_ROLES.has(actor.role)) {
    throw new ClinAgentError('FORBIDDEN', `Your role "${actor.role}" can only read. Ask an admin for the coordinator, data manager, PI or admin role to make changes.`, { role: actor.role, needs: [...WRITER_ROLES] });
  }
}
