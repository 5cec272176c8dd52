import type { HttpClient } from './http-client';
import type { MemberAccess, ProjectMember } from './types';

const segment = encodeURIComponent;

/** Who is on a trial (admins, and the trial's PI, may list; admins add, remove and grant identifier access). */
export function createMembersApi(http: HttpClient) {
  return {
    list: async (projectId: string) => (await http.get<{ members: ProjectMember[] }>(`/api/iit/projects/${segment(projectId)}/members`)).members,
    add: (projectId: string, userId: string) => http.post<ProjectMember>(`/api/iit/projects/${segment(projectId)}/members`, { userId }),
    remove: (projectId: string, userId: string) => http.delete(`/api/iit/projects/${segment(projectId)}/members/${segment(userId)}`),
    setIdentifierAccess: (projectId: string, userId: string, canViewIdentifiers: boolean) =>
      http.patch<MemberAccess>(`/api/projects/${segment(projectId)}/members/${segment(userId)}`, { canViewIdentifiers }),
  };
}
