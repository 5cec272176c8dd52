import type { HttpClient } from './http-client';
import type { AccountToken, CreateUserResponse, ManagedUser, Role } from './types';

const segment = encodeURIComponent;

/** Tokens (your own; anyone's for admins) and user management (admins): one function per route. */
export function createAccountApi(http: HttpClient) {
  return {
    listTokens: async (userId: string) => (await http.get<{ tokens: AccountToken[] }>(`/api/users/${segment(userId)}/tokens`)).tokens,
    revokeToken: (tokenId: string) => http.post<AccountToken>(`/api/tokens/${segment(tokenId)}/revoke`, {}),
    listUsers: async () => (await http.get<{ users: ManagedUser[] }>('/api/users')).users,
    /** The response carries the new user's first token, shown once: the console shows it for the admin to pass on. */
    createUser: (name: string, role: Role) => http.post<CreateUserResponse>('/api/users', { name, role }),
    setRole: (userId: string, role: Role) => http.patch<ManagedUser>(`/api/users/${segment(userId)}`, { role }),
    deactivate: (userId: string) => http.post<ManagedUser>(`/api/users/${segment(userId)}/deactivate`, {}),
    reactivate: (userId: string) => http.post<ManagedUser>(`/api/users/${segment(userId)}/reactivate`, {}),
  };
}
