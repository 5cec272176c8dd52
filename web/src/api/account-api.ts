import type { HttpClient } from './http-client';
import type { AccountToken, CreateUserResponse, ManagedUser, Role } from './types';

const segment = encodeURIComponent;

/** Tokens (your own; anyone's for admins) and user management (admins): one function per route. */
export function createAccountApi(http: HttpClient) {
  return {
    listTokens: async (userId: string) => (await http.get<{ tokens: AccountToken[] }>(`/api/users/${segment(userId)}/tokens`)).tokens,
    revokeToken: (tokenId: string) => http.post<AccountToken>(`/api/tokens/${segment(tokenId)}/revoke`, {}),
    listUsers: async () => (await http.get<{ users: ManagedUser[] }>('/api/users')).users,
    /** The response carries a one-time sign-in link for the new user (never a token): the admin passes it on. */
    createUser: (name: string, role: Role) => http.post<CreateUserResponse>('/api/users', { name, role }),
    /** A new one-time sign-in link for a user whose first one expired or was lost. */
    signInLink: (userId: string) => http.post<CreateUserResponse>(`/api/users/${segment(userId)}/sign-in-link`, {}),
    setRole: (userId: string, role: Role) => http.patch<ManagedUser>(`/api/users/${segment(userId)}`, { role }),
    deactivate: (userId: string) => http.post<ManagedUser>(`/api/users/${segment(userId)}/deactivate`, {}),
    reactivate: (userId: string) => http.post<ManagedUser>(`/api/users/${segment(userId)}/reactivate`, {}),
  };
}
