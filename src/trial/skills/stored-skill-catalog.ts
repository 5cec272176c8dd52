import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { buildSkillDefinition, type InvalidSkill, type Skill } from '../sop/load-skills.js';
import { checkSkillTools, createSkillCatalog, type SkillCatalog } from '../sop/skill-catalog.js';
import { createSkillStore, versionNotFound, type SkillVersionRow } from './skill-store.js';

/**
 * How often a process looks for skill versions activated by another process. Requests that start a run check
 * before serving (one indexed query), so this poll only bounds how late background work notices: a scheduled skill
 * whose cron changed, the skill list of a worker. Three seconds keeps that well under a cron minute and costs one
 * tiny query per process per tick.
 */
export const SKILL_POLL_MS = 3_000;

/** Who made the active version of a skill active, and when (GET /api/iit/skills shows it). */
export interface ActiveSkillInfo {
  version: number;
  updatedAt: string;
  updatedBy: string;
}

export interface StoredSkillCatalog extends SkillCatalog {
  /** The stored version, activation time and actor of an active skill; undefined for one that is not active. */
  activeInfo(id: string): ActiveSkillInfo | undefined;
  /** Called after every reload that changed what is served (schedules re-register here); errors are logged. */
  onChange(listener: () => Promise<void> | void): void;
  /** Stops the poll (before the database closes). */
  close(): void;
}

interface StoredSkillCatalogDeps {
  db: Db;
  tools: ToolRegistry;
  logger: Pick<Logger, 'warn' | 'error' | 'debug'>;
  /** Seed files that did not load: reported as today, next to the stored skills. */
  invalidFiles?: readonly InvalidSkill[];
  /** 0: no poll (tests and one-shot CLI commands refresh explicitly). */
  pollMs?: number;
}

/** Where a stored version came from, as a skill's `sourceFile` (messages and GET /api/iit/skills name it). */
function storedSource(row: Pick<SkillVersionRow, 'skillId' | 'version' | 'seedFile'>): string {
  return row.seedFile ?? `database:${row.skillId}@${row.version}`;
}

/**
 * The skills as the database holds them: the active version of each serves new runs, and every version that was
 * once active stays resolvable by number for runs created with it (compiled on first use). Reads are synchronous
 * (the engine asks per node); `refresh()` reloads when the set of active versions changed, which the activating
 * process calls at once and every other process on its poll or before it starts a run.
 */
export async function openStoredSkillCatalog(deps: StoredSkillCatalogDeps): Promise<StoredSkillCatalog> {
  const store = createSkillStore(deps.db);
  const listeners: Array<() => Promise<void> | void> = [];
  let stamp = '';
  let active: SkillCatalog = createSkillCatalog([], deps.tools, deps.invalidFiles ?? []);
  let info = new Map<string, ActiveSkillInfo>();
  let earlier = new Map<string, SkillVersionRow>();
  const built = new Map<string, Skill>();
  let inFlight: Promise<boolean> | undefined;

  async function reload(): Promise<void> {
    const rows = await store.servable();
    const skills: Skill[] = [];
    const invalid: InvalidSkill[] = [];
    const nextInfo = new Map<string, ActiveSkillInfo>();
    const nextEarlier = new Map<string, SkillVersionRow>();
    for (const row of rows) {
      if (row.status !== 'active') {
        nextEarlier.set(key(row.skillId, row.version), row);
        continue;
      }
      const result = buildSkillDefinition(row.definition, storedSource(row));
      if (!result.definition) {
        // A version that passed validation when activated but no longer builds (an operator or tool was removed by
        // an upgrade): inactive and shown to admins, like an invalid file.
        invalid.push({ id: row.skillId, sourceFile: storedSource(row), problems: result.problems });
        continue;
      }
      skills.push({ ...result.definition, version: row.version });
      nextInfo.set(row.skillId, { version: row.version, updatedAt: (row.activatedAt ?? row.createdAt).toISOString(), updatedBy: row.activatedBy ?? row.createdBy });
    }
    // An invalid seed file is listed even when an earlier version of its skill serves: its author should fix it.
    active = createSkillCatalog(skills, deps.tools, [...(deps.invalidFiles ?? []), ...invalid]);
    info = nextInfo;
    earlier = nextEarlier;
  }

  async function refresh(): Promise<boolean> {
    const current = await store.activeStamp();
    if (current === stamp) return false;
    await reload();
    stamp = current;
    for (const listener of listeners) {
      try {
        await listener();
      } catch (error) {
        deps.logger.error({ err: errorMessage(error) }, 'a listener of skill changes failed');
      }
    }
    return true;
  }

  function versionOf(id: string, version: number): Skill {
    const current = active.has(id) ? active.get(id) : undefined;
    if (current?.version === version) return current;
    const cached = built.get(key(id, version));
    if (cached) return cached;
    const row = earlier.get(key(id, version));
    if (!row) throw versionNotFound(id, version, [...(current?.version ? [current.version] : []), ...[...earlier.values()].filter((r) => r.skillId === id).map((r) => r.version)]);
    const result = buildSkillDefinition(row.definition, storedSource(row));
    const problems = result.definition ? checkSkillTools(result.definition, deps.tools) : result.problems;
    if (!result.definition || problems.length) {
      throw new ClinAgentError('SKILL_INVALID', `Version ${version} of skill "${id}" can no longer run:\n- ${problems.join('\n- ')}\nStart a new run with the active version.`, { skillId: id, version, problems });
    }
    const skill = { ...result.definition, version };
    built.set(key(id, version), skill);
    return skill;
  }

  await refresh();
  const timer = deps.pollMs ? setInterval(() => void refreshQuietly(), deps.pollMs) : undefined;
  timer?.unref();

  async function refreshQuietly(): Promise<void> {
    try {
      await catalog.refresh();
    } catch (error) {
      deps.logger.debug({ err: errorMessage(error) }, 'skill catalog poll failed; retried on the next tick');
    }
  }

  const catalog: StoredSkillCatalog = {
    list: () => active.list(),
    has: (id) => active.has(id),
    invalid: () => active.invalid(),
    get: (id, version) => (version === undefined ? active.get(id) : versionOf(id, version)),
    // Concurrent callers share one reload.
    refresh: () => (inFlight ??= refresh().finally(() => (inFlight = undefined))),
    activeInfo: (id) => info.get(id),
    onChange: (listener) => void listeners.push(listener),
    close: () => clearInterval(timer),
  };
  return catalog;
}

const key = (id: string, version: number) => `${id}\u0000${version}`;
