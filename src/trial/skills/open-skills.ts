import type { Db } from '../../core/db/connect.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { reportInvalidSkills } from '../sop/skill-catalog.js';
import { seedSkills } from './seed-skills.js';
import { openStoredSkillCatalog, SKILL_POLL_MS, type StoredSkillCatalog } from './stored-skill-catalog.js';

/**
 * The skills of a process at start-up: the SKILLS_DIR files seed the database (each content once), invalid files
 * are logged and listed for admins, and the catalog serves the database's active versions from then on.
 */
export async function openSkills(deps: { db: Db; tools: ToolRegistry; logger: Logger; directory: string; pollMs?: number }): Promise<StoredSkillCatalog> {
  const { invalid } = await seedSkills(deps.db, deps.directory, deps.logger);
  const catalog = await openStoredSkillCatalog({ db: deps.db, tools: deps.tools, logger: deps.logger, invalidFiles: invalid, pollMs: deps.pollMs ?? SKILL_POLL_MS });
  reportInvalidSkills(catalog.invalid(), deps.logger);
  return catalog;
}
