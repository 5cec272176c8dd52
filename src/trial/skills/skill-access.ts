import { assertWriterRole } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import { WRITER_ROLES, type User } from '../../core/auth/users.js';
import { ClinAgentError } from '../../core/errors.js';

/*
 * Who may read and change a skill. A skill for every project (no `projects`) is platform configuration: anyone
 * signed in reads it, admins change it. A skill for named projects belongs to those trials: a member of every one
 * of them reads it, and one with a writer role (not a viewer) may draft and activate it, for their projects only.
 * A skill of a trial the user is not in answers as a missing one: another trial's rules are its own business.
 * `scope` is the projects of every version together (a skill cannot be taken over by a draft naming new projects).
 */

export async function canReadSkill(users: MembershipCheck, actor: User, scope: readonly string[] | null): Promise<boolean> {
  if (actor.role === 'admin' || scope === null) return true;
  for (const projectId of scope) if (!(await users.isMember(projectId, actor))) return false;
  return true;
}

export function unknownSkill(skillId: string): ClinAgentError {
  const shown = skillId.length > 64 ? `${skillId.slice(0, 64)}…` : skillId;
  return new ClinAgentError('NOT_FOUND', `Skill "${shown}" does not exist or belongs to a trial you are not in. List the skills you can use with GET /api/iit/skills.`, { skillId: shown });
}

/** Refuses a change of a skill (its projects now, `scope` for an existing one, `projects` after the change). */
export async function assertCanEditSkill(users: MembershipCheck, actor: User, skillId: string, change: { scope?: readonly string[] | null; projects: readonly string[] | null }): Promise<void> {
  if (actor.role === 'admin') return;
  if (change.scope !== undefined && !(await canReadSkill(users, actor, change.scope))) throw unknownSkill(skillId);
  // A viewer platform-wide may be a coordinator in a trial (MembershipCheck.roleIn): the role that counts is the one
  // in each project the skill names, checked below.
  if (change.scope === null || change.projects === null) {
    throw new ClinAgentError('FORBIDDEN', `Skill "${skillId}" applies to every project; only admins change such skills. Ask an admin, or write a skill for your trial with "projects: [<your project id>]".`, { skillId, needs: ['admin'] });
  }
  if (!change.projects.length) assertWriterRole(actor);
  const outside: string[] = [];
  const readOnly: string[] = [];
  // The trials the skill runs on now count as much as those it will run on: a viewer of one of them may not change
  // its rules, nor take the skill away from it.
  for (const projectId of new Set([...(change.scope ?? []), ...change.projects])) {
    const role = await users.roleIn(projectId, actor);
    if (!role) outside.push(projectId);
    else if (!WRITER_ROLES.has(role)) readOnly.push(projectId);
  }
  if (outside.length) {
    throw new ClinAgentError('FORBIDDEN', `You may write skills only for projects you are a member of; ${outside.map((p) => `"${p}"`).join(', ')} ${outside.length > 1 ? 'are' : 'is'} not one of yours. Remove ${outside.length > 1 ? 'them' : 'it'} from "projects", or ask an admin.`, { skillId, field: 'projects' });
  }
  if (readOnly.length) {
    throw new ClinAgentError('FORBIDDEN', `Your role in ${readOnly.map((p) => `"${p}"`).join(', ')} is viewer, which can only read; a skill for ${readOnly.length > 1 ? 'them' : 'it'} needs the coordinator or PI role there. Ask an admin.`, { skillId, field: 'projects', needs: [...WRITER_ROLES] });
  }
}
