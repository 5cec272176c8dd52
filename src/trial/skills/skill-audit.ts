import { appendAuditEntries, PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';

/**
 * A skill change goes into the audit trail of every project the skill applies to (before or after the change), so
 * each trial's inspector finds the rule changes that touched it; a skill for every project is a platform change
 * and goes into the platform trail, as staged-agent configuration changes do.
 */
export async function auditSkillChange(
  db: Db,
  entry: { skillId: string; action: 'draft_saved' | 'activated' | 'seeded'; actor: string; projects: readonly string[] | null; oldValue?: unknown; newValue: unknown; reason?: string },
): Promise<void> {
  const scopes = entry.projects === null ? [PLATFORM_AUDIT_SCOPE] : [...new Set(entry.projects)];
  await appendAuditEntries(
    db,
    scopes.map((projectId) => ({ projectId, entityType: 'skill' as const, entityId: entry.skillId, action: entry.action, actor: entry.actor, oldValue: entry.oldValue, newValue: entry.newValue, reason: entry.reason ?? '' })),
  );
}

/** The projects a definition names; null when it applies to every project (or names none it can be read from). */
export function definitionProjects(definition: unknown): string[] | null {
  const projects = definition !== null && typeof definition === 'object' ? (definition as { projects?: unknown }).projects : undefined;
  return Array.isArray(projects) ? projects.filter((p): p is string => typeof p === 'string') : null;
}

/** The projects of several versions together: null as soon as one of them applies to every project. */
export function unionProjects(lists: ReadonlyArray<readonly string[] | null>): string[] | null {
  if (lists.some((list) => list === null)) return null;
  return [...new Set(lists.flatMap((list) => list ?? []))];
}
