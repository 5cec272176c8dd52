import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { skillVersions } from '../../core/db/schema/trial.js';
import { addNextVersion } from '../../core/definitions/index.js';
import { ClinAgentError } from '../../core/errors.js';

export type SkillVersionRow = typeof skillVersions.$inferSelect;
/** A version without its definition and YAML, for lists. */
export type SkillVersionSummary = Omit<SkillVersionRow, 'definition' | 'sourceYaml'>;

interface NewSkillVersion {
  definition: Record<string, unknown>;
  sourceYaml: string;
  createdBy: string;
  comment?: string;
  seedHash?: string;
  seedFile?: string;
}

const summaryColumns = {
  skillId: skillVersions.skillId,
  version: skillVersions.version,
  status: skillVersions.status,
  createdBy: skillVersions.createdBy,
  createdAt: skillVersions.createdAt,
  comment: skillVersions.comment,
  activatedBy: skillVersions.activatedBy,
  activatedAt: skillVersions.activatedAt,
  seedHash: skillVersions.seedHash,
  seedFile: skillVersions.seedFile,
};

/**
 * The skill_versions table: versions are only added, and only their status changes (draft → active → retired, or
 * a retired version activated again). Pass a transaction as `db` to write a version with its audit entry.
 */
export function createSkillStore(db: Db) {
  async function latestVersion(skillId: string): Promise<number | undefined> {
    const [row] = await db.select({ version: skillVersions.version }).from(skillVersions).where(eq(skillVersions.skillId, skillId)).orderBy(desc(skillVersions.version)).limit(1);
    return row?.version;
  }

  async function isSeeded(skillId: string, seedHash: string): Promise<boolean> {
    const [row] = await db.select({ version: skillVersions.version }).from(skillVersions).where(and(eq(skillVersions.skillId, skillId), eq(skillVersions.seedHash, seedHash))).limit(1);
    return row !== undefined;
  }

  return {
    latestVersion,

    /**
     * Adds a draft numbered one past the newest (a seed file's content is added so too, then activated in the same
     * transaction). Undefined only when `seedHash` is given and another process seeded that content meanwhile.
     */
    async addDraft(skillId: string, input: NewSkillVersion): Promise<SkillVersionRow | undefined> {
      const row = await addNextVersion(
        () => latestVersion(skillId),
        async (version) => {
          const [inserted] = await db
            .insert(skillVersions)
            .values({ skillId, version, definition: input.definition, sourceYaml: input.sourceYaml, status: 'draft', createdBy: input.createdBy, comment: input.comment ?? '', seedHash: input.seedHash ?? null, seedFile: input.seedFile ?? null })
            .onConflictDoNothing()
            .returning();
          if (inserted) return inserted;
          // The conflict was the seed index, not the version number: that content is in already.
          return input.seedHash && (await isSeeded(skillId, input.seedHash)) ? null : undefined;
        },
        () => conflict(skillId),
      );
      return row ?? undefined;
    },

    async get(skillId: string, version: number): Promise<SkillVersionRow | undefined> {
      const [row] = await db.select().from(skillVersions).where(and(eq(skillVersions.skillId, skillId), eq(skillVersions.version, version))).limit(1);
      return row;
    },

    /** Every version of a skill, newest first, without definitions. */
    async versions(skillId: string): Promise<SkillVersionSummary[]> {
      return db.select(summaryColumns).from(skillVersions).where(eq(skillVersions.skillId, skillId)).orderBy(desc(skillVersions.version));
    },

    /** Every version of every skill, without definitions (skills are few; their versions grow by people's edits). */
    async allSummaries(): Promise<SkillVersionSummary[]> {
      return db.select(summaryColumns).from(skillVersions).orderBy(asc(skillVersions.skillId), desc(skillVersions.version));
    },

    /** Every version of a skill with its definition, newest first (access checks read every version's projects). */
    async rows(skillId: string): Promise<SkillVersionRow[]> {
      return db.select().from(skillVersions).where(eq(skillVersions.skillId, skillId)).orderBy(desc(skillVersions.version));
    },

    /** Versions a task run may use: the active ones, and every retired one (a run in flight may be pinned to it). */
    async servable(): Promise<SkillVersionRow[]> {
      return db.select().from(skillVersions).where(inArray(skillVersions.status, ['active', 'retired'])).orderBy(asc(skillVersions.skillId), asc(skillVersions.version));
    },

    /**
     * Which version of which skill is active, as one string: what a process compares before serving skills. It
     * reads the small unique index of active versions only, so checking it per request costs one cheap query.
     */
    async activeStamp(): Promise<string> {
      const rows = await db.select({ skillId: skillVersions.skillId, version: skillVersions.version }).from(skillVersions).where(eq(skillVersions.status, 'active')).orderBy(asc(skillVersions.skillId));
      return rows.map((r) => `${r.skillId}@${r.version}`).join(',');
    },

    isSeeded,

    /**
     * Makes `version` the active one and retires the version active before. The skill's rows are locked first, so
     * two activations at once run one after the other and exactly one version is active after both (the unique
     * index skill_versions_active_uq would refuse a second active row in any case).
     */
    async activate(skillId: string, version: number, actor: string): Promise<{ activated: SkillVersionRow; retired?: SkillVersionRow }> {
      const rows = await db.select({ version: skillVersions.version, status: skillVersions.status }).from(skillVersions).where(eq(skillVersions.skillId, skillId)).for('update');
      const target = rows.find((r) => r.version === version);
      if (!target) throw versionNotFound(skillId, version, rows.map((r) => r.version));
      if (target.status === 'active') throw new ClinAgentError('CONFLICT_STATE', `Version ${version} of skill "${skillId}" is already active. Save a draft and activate that to change it.`, { skillId, version });
      const [retired] = await db
        .update(skillVersions)
        .set({ status: 'retired' })
        .where(and(eq(skillVersions.skillId, skillId), eq(skillVersions.status, 'active')))
        .returning();
      const [activated] = await db
        .update(skillVersions)
        .set({ status: 'active', activatedBy: actor, activatedAt: sql`now()` })
        .where(and(eq(skillVersions.skillId, skillId), eq(skillVersions.version, version)))
        .returning();
      return { activated: activated!, ...(retired ? { retired } : {}) };
    },
  };
}

export function versionNotFound(skillId: string, version: number, known: readonly number[]): ClinAgentError {
  return new ClinAgentError('NOT_FOUND', `Skill "${skillId}" has no version ${version}. Its versions: ${[...known].sort((a, b) => a - b).join(', ') || '(none)'} (GET /api/iit/skills/${skillId}/versions).`, { skillId, version });
}

function conflict(skillId: string): ClinAgentError {
  return new ClinAgentError('CONFLICT_STATE', `Skill "${skillId}" is being changed by others at the same time; reload it and try again.`, { skillId });
}
