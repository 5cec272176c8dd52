import { asc } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { projects } from '../../core/db/schema/auth.js';
import { getDictionary, getEvents } from '../store/dictionary.js';
import type { ProjectDictionary } from './dictionary-check.js';

/** The dictionaries of `projectIds`; a project without one (nothing imported yet) is returned as skipped. */
export async function loadDictionaries(db: Db, projectIds: readonly string[]): Promise<{ dictionaries: ProjectDictionary[]; skipped: string[] }> {
  const dictionaries: ProjectDictionary[] = [];
  const skipped: string[] = [];
  for (const projectId of projectIds) {
    const fields = await getDictionary(db, projectId);
    if (!fields.length) {
      skipped.push(projectId);
      continue;
    }
    dictionaries.push({ projectId, fields, events: (await getEvents(db, projectId)).map((e) => e.eventName) });
  }
  return { dictionaries, skipped };
}

export async function allProjectIds(db: Db): Promise<string[]> {
  return (await db.select({ id: projects.id }).from(projects).orderBy(asc(projects.id))).map((p) => p.id);
}
