import { create } from 'zustand';
import { api, type CreateUserResponse, type ManagedUser, type Role } from '../api';
import { loadLists } from './load-lists';

export const ROLES: readonly Role[] = ['admin', 'pi', 'data_manager', 'coordinator', 'viewer'];

interface UsersState {
  users: ManagedUser[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  /** User ids with a change in flight. */
  saving: Record<string, boolean>;
  /** The last refused change (a 409 for the last admin says why), shown on that user's row. */
  changeError: { userId: string; error: unknown } | null;
  /**
   * The one-time sign-in link just made for a user (a new one, or `isNew` false: a new link for an existing user),
   * shown until dismissed: the server never shows it again.
   */
  created: (CreateUserResponse & { isNew: boolean }) | null;
  isCreating: boolean;
  createError: unknown;
  load(): Promise<void>;
  /** Creates a user; true when created (the form then clears). */
  create(name: string, role: Role): Promise<boolean>;
  dismissCreated(): void;
  /** A new one-time sign-in link for an existing user, shown as `created`; a refusal goes to that user's row. */
  issueLink(userId: string): Promise<void>;
  setRole(userId: string, role: Role): Promise<void>;
  setActive(userId: string, isActive: boolean): Promise<void>;
  dismissError(): void;
}

/** The admin users page: list and create users, change roles, deactivate and reactivate. */
export const useUsersStore = create<UsersState>()((set, get) => {
  async function change(userId: string, call: () => Promise<ManagedUser>): Promise<void> {
    if (get().saving[userId]) return;
    set((state) => ({ saving: { ...state.saving, [userId]: true }, changeError: null }));
    try {
      const updated = await call();
      set((state) => ({ users: state.users.map((user) => (user.id === updated.id ? updated : user)) }));
    } catch (error) {
      set({ changeError: { userId, error } });
    } finally {
      set((state) => ({ saving: { ...state.saving, [userId]: false } }));
    }
  }

  return {
    users: [],
    hasLoaded: false,
    isLoading: false,
    error: null,
    saving: {},
    changeError: null,
    created: null,
    isCreating: false,
    createError: null,

    load: () => loadLists(set, async () => ({ users: await api.account.listUsers() })),

    setRole: (userId, role) => change(userId, () => api.account.setRole(userId, role)),
    setActive: (userId, isActive) => change(userId, () => (isActive ? api.account.reactivate(userId) : api.account.deactivate(userId))),
    dismissError: () => set({ changeError: null }),

    async create(name, role) {
      if (get().isCreating) return false;
      set({ isCreating: true, createError: null, created: null });
      try {
        const created = await api.account.createUser(name, role);
        // Listed at once with the fields the list shows; the next load brings the server's own row.
        const listed: ManagedUser = { ...created.user, createdAt: new Date().toISOString(), deactivatedAt: null };
        set((state) => ({ created: { ...created, isNew: true }, users: [...state.users, listed] }));
        return true;
      } catch (error) {
        set({ createError: error });
        return false;
      } finally {
        set({ isCreating: false });
      }
    },
    dismissCreated: () => set({ created: null }),

    async issueLink(userId) {
      if (get().saving[userId]) return;
      set((state) => ({ saving: { ...state.saving, [userId]: true }, changeError: null, created: null }));
      try {
        set({ created: { ...(await api.account.signInLink(userId)), isNew: false } });
      } catch (error) {
        set({ changeError: { userId, error } });
      } finally {
        set((state) => ({ saving: { ...state.saving, [userId]: false } }));
      }
    },
  };
});
