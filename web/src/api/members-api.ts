import type { HttpClient } from './http-client';
import type { MemberAccess, ProjectMember, ProjectRole } from './types';

const segment = encodeURIComponent;

/** Who is on a trial (admins, and the trial's PI, may list; admins add, remove and grant identifier access). */
export function createMembersApi(http: HttpClient) {
  return {
    list: async (projectId: string) => (await http.get<{ members: ProjectMember[] }>(`/api/iit/projects/${segment(projectId)}/members`)).members,
    /** `role`: the member's role in this trial; omitted, their platform role applies. */
    add: (projectId: string, userId: string, role?: ProjectRole) => http.post<ProjectMember>(`/api/iit/projects/${segment(projectId)}/members`, { userId, ...(role ? { role } : {}) }),
    remove: (projectId: string, userId: string) => http.delete(`/api/iit/projects/${segment(projectId)}/members/${segment(userId)}`),
    setIdentifierAccess: (projectId: string, userId: string, canViewIdentifiers: boolean) =>
      http.patch<MemberAccess>(`/api/projects/${segment(projectId)}/members/${segment(userId)}`, { canViewIdentifiers }),
    /** null: the member's platform role applies again. */
    setRole: (projectId: string, userId: string, role: ProjectRole | null) => http.patch<MemberAccess>(`/api/projects/${segment(projectId)}/members/${segment(userId)}`, { role }),
  };
}
