import { create } from 'zustand';
import { api, type MemberAccess, type ProjectMember, type ProjectRole } from '../api';

interface ProjectMembersState {
  /** The project the list belongs to; another project's list is never shown under this one. */
  projectId: string | null;
  members: ProjectMember[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  /** User ids with a change in flight. */
  saving: Record<string, boolean>;
  /** The last refused change (409 already a member, 404 unknown user), shown above the list. */
  changeError: unknown;
  load(projectId: string): Promise<void>;
  /** `role`: the member's role in this trial; omitted, their platform role applies. */
  add(projectId: string, userId: string, role?: ProjectRole): Promise<boolean>;
  /** null: the member's platform role applies again. */
  setRole(projectId: string, userId: string, role: ProjectRole | null): Promise<void>;
  remove(projectId: string, userId: string): Promise<void>;
  setIdentifierAccess(projectId: string, userId: string, canViewIdentifiers: boolean): Promise<void>;
  dismissError(): void;
}

/** A trial's members: who they are, their role, and whether they see identifier fields. */
export const useProjectMembersStore = create<ProjectMembersState>()((set, get) => {
  async function change(userId: string, call: () => Promise<void>): Promise<boolean> {
    if (get().saving[userId]) return false;
    set((state) => ({ saving: { ...state.saving, [userId]: true }, changeError: null }));
    try {
      await call();
      return true;
    } catch (error) {
      set({ changeError: error });
      return false;
    } finally {
      set((state) => ({ saving: { ...state.saving, [userId]: false } }));
    }
  }
  const forProject = (projectId: string) => get().projectId === projectId;
  /** A member's role and grant as the server answered a change of either. */
  function applyAccess(projectId: string, access: MemberAccess): void {
    if (!forProject(projectId)) return;
    const seesIdentifiers = access.role === 'admin' || access.role === 'pi' || access.canViewIdentifiers;
    set((state) => ({
      members: state.members.map((member) => (member.userId === access.userId ? { ...member, role: access.role, projectRole: access.projectRole, canViewIdentifiers: access.canViewIdentifiers, seesIdentifiers } : member)),
    }));
  }

  return {
    projectId: null,
    members: [],
    hasLoaded: false,
    isLoading: false,
    error: null,
    saving: {},
    changeError: null,

    async load(projectId) {
      if (!forProject(projectId)) set({ projectId, members: [], hasLoaded: false, changeError: null });
      set({ isLoading: true, error: null });
      try {
        const members = await api.members.list(projectId);
        if (forProject(projectId)) set({ members, hasLoaded: true });
      } catch (error) {
        if (forProject(projectId)) set({ error });
      } finally {
        if (forProject(projectId)) set({ isLoading: false });
      }
    },

    add: (projectId, userId, role) =>
      change(userId, async () => {
        const member = await api.members.add(projectId, userId, role);
        if (forProject(projectId)) set((state) => ({ members: [...state.members, member].sort((a, b) => a.name.localeCompare(b.name)) }));
      }),

    remove: async (projectId, userId) => {
      await change(userId, async () => {
        await api.members.remove(projectId, userId);
        if (forProject(projectId)) set((state) => ({ members: state.members.filter((member) => member.userId !== userId) }));
      });
    },

    setIdentifierAccess: async (projectId, userId, canViewIdentifiers) => {
      await change(userId, async () => applyAccess(projectId, await api.members.setIdentifierAccess(projectId, userId, canViewIdentifiers)));
    },

    setRole: async (projectId, userId, role) => {
      await change(userId, async () => applyAccess(projectId, await api.members.setRole(projectId, userId, role)));
    },

    dismissError: () => set({ changeError: null }),
  };
});
