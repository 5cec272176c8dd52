import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { agentConfigs } from '../../core/db/schema/agent-configs.js';
import { addNextVersion } from '../../core/definitions/index.js';
import { ClinAgentError } from '../../core/errors.js';
import type { StagedAgentConfig } from './config.js';

export interface StoredConfig {
  agentId: string;
  version: number;
  config: StagedAgentConfig;
  source: 'seed' | 'admin';
  seedVersion: number;
  createdBy: string;
  note: string;
  createdAt: string;
}

interface ConfigStoreDeps {
  db: Db;
  /** Parses and checks a whole configuration (validateStagedConfig with the server's tools and validators). */
  validate(raw: unknown, source: string): StagedAgentConfig;
}

/**
 * Versioned staged-agent configurations. Rows are only ever added: the newest version is in use, earlier ones stay
 * readable. The shipped YAML seeds a version once per file version, so a release that ships version 2 of the file
 * makes it current (an admin's edits stay in the history, and the log says it was superseded), while restarting
 * the same release changes nothing.
 */
export function createConfigStore(deps: ConfigStoreDeps) {
  const { db } = deps;

  function toStored(row: typeof agentConfigs.$inferSelect): StoredConfig {
    return { agentId: row.agentId, version: row.version, config: row.config as unknown as StagedAgentConfig, source: row.source, seedVersion: row.seedVersion, createdBy: row.createdBy, note: row.note, createdAt: row.createdAt.toISOString() };
  }

  async function latest(agentId: string): Promise<StoredConfig | undefined> {
    const [row] = await db.select().from(agentConfigs).where(eq(agentConfigs.agentId, agentId)).orderBy(desc(agentConfigs.version)).limit(1);
    return row ? toStored(row) : undefined;
  }

  /**
   * Adds a version, numbered one past the newest. Two writers at once: the second one's insert meets the primary
   * key and is retried on the new newest, so both edits are kept in order and neither is lost.
   */
  async function add(agentId: string, config: StagedAgentConfig, meta: { source: 'seed' | 'admin'; seedVersion: number; createdBy: string; note?: string }): Promise<StoredConfig> {
    const row = await addNextVersion(
      async () => (await latest(agentId))?.version,
      async (version) => {
        const [inserted] = await db
          .insert(agentConfigs)
          .values({ agentId, version, config: config as unknown as Record<string, unknown>, source: meta.source, seedVersion: meta.seedVersion, createdBy: meta.createdBy, note: meta.note ?? '' })
          .onConflictDoNothing()
          .returning();
        return inserted;
      },
      () => new ClinAgentError('CONFLICT_STATE', `The configuration of "${agentId}" is being changed by others at the same time; reload it and try again.`, { agentId }),
    );
    return toStored(row);
  }

  return {
    /** Seeds the shipped file's version once; the current configuration after it. */
    async seed(config: StagedAgentConfig, sourceFile: string): Promise<{ stored: StoredConfig; seeded: boolean }> {
      const [already] = await db
        .select({ version: agentConfigs.version })
        .from(agentConfigs)
        .where(and(eq(agentConfigs.agentId, config.agentId), eq(agentConfigs.source, 'seed'), eq(agentConfigs.seedVersion, config.version)))
        .limit(1);
      if (already) return { stored: (await latest(config.agentId))!, seeded: false };
      return { stored: await add(config.agentId, config, { source: 'seed', seedVersion: config.version, createdBy: 'system', note: `seeded from ${sourceFile}` }), seeded: true };
    },
    /** The configuration in use; NOT_FOUND when the agent has none. */
    async current(agentId: string): Promise<StoredConfig> {
      const stored = await latest(agentId);
      if (!stored) throw new ClinAgentError('NOT_FOUND', `Staged agent "${agentId}" has no configuration. Its YAML file is seeded at start-up; check the agent id.`, { agentId });
      return stored;
    },
    async version(agentId: string, version: number): Promise<StoredConfig> {
      const [row] = await db.select().from(agentConfigs).where(and(eq(agentConfigs.agentId, agentId), eq(agentConfigs.version, version))).limit(1);
      if (!row) throw new ClinAgentError('NOT_FOUND', `Staged agent "${agentId}" has no configuration version ${version}. List the versions with GET /api/admin/agent-configs/${agentId}/versions.`, { agentId, version });
      return toStored(row);
    },
    async versions(agentId: string): Promise<Array<Omit<StoredConfig, 'config'>>> {
      const rows = await db.select().from(agentConfigs).where(eq(agentConfigs.agentId, agentId)).orderBy(desc(agentConfigs.version));
      return rows.map((row) => {
        const { config: _config, ...rest } = toStored(row);
        return rest;
      });
    },
    /**
     * An admin's new version. The whole configuration is checked first (every problem named with its stage and
     * field), and its agentId must be this agent's: a configuration cannot move to another agent.
     */
    async update(agentId: string, raw: unknown, actor: string, note?: string): Promise<StoredConfig> {
      const current = await this.current(agentId);
      const config = deps.validate(raw, `${agentId} (new version)`);
      if (config.agentId !== agentId) {
        throw new ClinAgentError('VALIDATION_FAILED', `agentId: the configuration is for "${config.agentId}", not "${agentId}"; the agent id cannot change.`, { field: 'agentId' });
      }
      const removed = current.config.stages.map((s) => s.stageId).filter((id) => !config.stages.some((s) => s.stageId === id));
      if (removed.length) {
        // Protocols in progress sit at these stages and hold their data under them: removing one would strand them.
        throw new ClinAgentError('VALIDATION_FAILED', `stages: ${removed.map((id) => `"${id}"`).join(', ')} cannot be removed: protocols in progress may be at that stage. Keep the stage (change its instruction, rules or cards instead).`, { field: 'stages', removed });
      }
      return add(agentId, config, { source: 'admin', seedVersion: config.version, createdBy: actor, note });
    },
  };
}

export type ConfigStore = ReturnType<typeof createConfigStore>;
