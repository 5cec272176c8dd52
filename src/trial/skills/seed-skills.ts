import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { sql, type Db } from '../../core/db/connect.js';
import type { Logger } from '../../core/logger.js';
import { readSkillFolder, type InvalidSkill } from '../sop/load-skills.js';
import { auditSkillChange, definitionProjects } from './skill-audit.js';
import { createSkillStore } from './skill-store.js';
import { withTransaction } from '../../core/db/transaction.js';

/**
 * The shipped skill files seed the database: each file content once (by its sha256), as a new active version
 * authored by `seed:<file>`. Restarting with the same files changes nothing, so a skill edited through the API
 * stays as edited while its file is unchanged; a release that ships a changed file makes that the active version
 * (the edit stays in the history). Invalid files are not stored; they are returned to be reported as before.
 */
export async function seedSkills(db: Db, directory: string, logger: Pick<Logger, 'info' | 'debug'>): Promise<{ seeded: Array<{ skillId: string; version: number }>; invalid: InvalidSkill[] }> {
  const folder = readSkillFolder(directory);
  const seeded: Array<{ skillId: string; version: number }> = [];
  for (const skill of folder.skills) {
    const text = readFileSync(skill.sourceFile, 'utf8');
    const seedHash = createHash('sha256').update(text).digest('hex');
    if (await createSkillStore(db).isSeeded(skill.id, seedHash)) continue;
    const file = path.basename(skill.sourceFile);
    const actor = `seed:${file}`;
    const version = await withTransaction(db, async (tx) => {
      // Several processes start at once on one database (a server and its workers): one seeds a skill at a time,
      // and the others find it seeded once they get the lock.
      await tx.execute(sql`SELECT pg_advisory_xact_lock(720417012, hashtext(${skill.id}))`);
      const store = createSkillStore(tx);
      if (await store.isSeeded(skill.id, seedHash)) return undefined;
      // The file as its author wrote it (key order, no defaults filled in); it passed every check above.
      const definition = parseYaml(text) as Record<string, unknown>;
      const draft = await store.addDraft(skill.id, { definition, sourceYaml: text, createdBy: actor, comment: `seeded from ${file}`, seedHash, seedFile: file });
      if (!draft) return undefined;
      const { activated, retired } = await store.activate(skill.id, draft.version, actor);
      await auditSkillChange(tx, {
        skillId: skill.id, action: 'seeded', actor, projects: definitionProjects(definition),
        oldValue: retired ? { activeVersion: retired.version } : undefined, newValue: { activeVersion: activated.version, file, seedHash },
      });
      return activated.version;
    });
    if (version === undefined) continue;
    seeded.push({ skillId: skill.id, version });
    logger.debug({ skillId: skill.id, version, file }, 'skill version seeded from its file');
  }
  return { seeded, invalid: folder.invalid };
}
