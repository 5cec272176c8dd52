import type { Role } from '../api';
import { useSessionStore } from './session';
import { useTrialCatalogStore } from './trial-catalog';

/** Roles that may change a trial's data; the server's list (core/auth/users.ts WRITER_ROLES). */
export const WRITER_ROLES: ReadonlySet<string> = new Set(['admin', 'pi', 'data_manager', 'coordinator']);
/** Roles that may close and reopen queries: data management, not the site (core/auth/users.ts QUERY_CLOSER_ROLES). */
export const QUERY_CLOSER_ROLES: ReadonlySet<string> = new Set(['admin', 'pi', 'data_manager']);

/**
 * The signed-in user's role in a trial: the one an admin set for it, else their platform role (the projects list
 * carries it). What a trial page offers goes by it; the server checks the same role on every change.
 */
export function useRoleIn(projectId: string | null): Role | undefined {
  const platformRole = useSessionStore((state) => state.user?.role);
  const projectRole = useTrialCatalogStore((state) => state.projects.find((project) => project.id === projectId)?.role);
  return projectRole ?? platformRole;
}
