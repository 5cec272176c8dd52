import path from 'node:path';
import type { ProjectDirectory } from '../../core/auth/projects.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { nextCronRun } from '../qc/workers.js';
import type { Skill } from '../sop/load-skills.js';
import type { SkillCatalog } from '../sop/skill-catalog.js';
import { definitionProjects } from './skill-audit.js';
import { createSkillStore } from './skill-store.js';
import type { ActiveSkillInfo } from './stored-skill-catalog.js';

/** One line of GET /api/iit/skills (contract QcSkill). */
export interface SkillSummary {
  id: string;
  name: string;
  description: string;
  projects: string[] | null;
  schedule: string | null;
  nextRun: string | null;
  nodes: number;
  file: string;
  status: 'active' | 'draft' | 'invalid';
  problems: string[];
  version: number | null;
  draftVersion: number | null;
  updatedAt: string | null;
  updatedBy: string | null;
}

type Catalog = SkillCatalog & { activeInfo?(id: string): ActiveSkillInfo | undefined };

/** Every skill that can run, with its stored version and the newest draft after it (no user check: callers do it). */
async function allSkillSummaries(deps: { db: Db; catalog: Catalog }): Promise<{ active: SkillSummary[]; drafts: SkillSummary[]; invalid: SkillSummary[] }> {
  const summaries = await createSkillStore(deps.db).allSummaries();
  const newestDraft = new Map<string, { version: number; createdAt: Date; createdBy: string }>();
  const activeVersion = new Map(summaries.filter((s) => s.status === 'active').map((s) => [s.skillId, s.version]));
  for (const s of summaries) {
    if (s.status === 'draft' && !newestDraft.has(s.skillId) && s.version > (activeVersion.get(s.skillId) ?? 0)) newestDraft.set(s.skillId, s);
  }
  const active = deps.catalog.list().map((skill) => activeSummary(skill, deps.catalog.activeInfo?.(skill.id), newestDraft.get(skill.id)?.version ?? null));
  const served = new Set(active.map((s) => s.id));
  const draftOnly = [...newestDraft.keys()].filter((id) => !served.has(id) && !activeVersion.has(id));
  const store = createSkillStore(deps.db);
  const drafts: SkillSummary[] = [];
  for (const id of draftOnly) {
    const row = await store.get(id, newestDraft.get(id)!.version);
    if (row) drafts.push(draftSummary(row));
  }
  const invalid = deps.catalog.invalid().map((s) => ({ ...EMPTY, id: s.id, name: path.basename(s.sourceFile), file: path.basename(s.sourceFile), status: 'invalid' as const, problems: s.problems }));
  return { active, drafts, invalid };
}

/**
 * The skills `actor` may know of: those for every project and those for a project they are in, naming only their
 * projects; admins see all, and the invalid ones with their problems. Drafts never activated are listed too, so
 * the editor can open them.
 */
export async function listSkillSummaries(deps: { db: Db; users: ProjectDirectory; catalog: Catalog }, actor: User): Promise<SkillSummary[]> {
  await deps.catalog.refresh();
  const { active, drafts, invalid } = await allSkillSummaries(deps);
  if (actor.role === 'admin') return [...active, ...drafts, ...invalid];
  const mine = new Set((await deps.users.listProjects(actor)).map((p) => p.id));
  return [...active, ...drafts].flatMap((skill) => {
    if (skill.projects === null) return [skill];
    const projects = skill.projects.filter((id) => mine.has(id));
    return projects.length ? [{ ...skill, projects }] : [];
  });
}

/** The skills that can run as the list shows them, without drafts (code acting for the system: the assistant). */
export function activeSkillSummaries(catalog: Catalog): SkillSummary[] {
  return catalog.list().map((skill) => activeSummary(skill, catalog.activeInfo?.(skill.id), null));
}

const EMPTY: SkillSummary = { id: '', name: '', description: '', projects: null, schedule: null, nextRun: null, nodes: 0, file: '', status: 'active', problems: [], version: null, draftVersion: null, updatedAt: null, updatedBy: null };

function activeSummary(skill: Skill, info: ActiveSkillInfo | undefined, draftVersion: number | null): SkillSummary {
  return {
    id: skill.id, name: skill.name, description: skill.description, projects: skill.projects ?? null, schedule: skill.schedule ?? null, nextRun: skill.schedule ? nextCronRun(skill.schedule) : null,
    nodes: Object.keys(skill.nodes).length, file: path.basename(skill.sourceFile), status: 'active', problems: [],
    version: skill.version ?? null, draftVersion, updatedAt: info?.updatedAt ?? null, updatedBy: info?.updatedBy ?? null,
  };
}

/** A skill with drafts only: what its newest draft says of itself, read leniently (a draft may be unfinished). */
function draftSummary(row: { skillId: string; version: number; definition: Record<string, unknown>; createdAt: Date; createdBy: string }): SkillSummary {
  const text = (key: string) => (typeof row.definition[key] === 'string' ? (row.definition[key] as string) : '');
  const nodes = row.definition.nodes;
  return {
    ...EMPTY, id: row.skillId, name: text('name') || row.skillId, description: text('description'), projects: definitionProjects(row.definition), schedule: text('schedule') || null,
    nodes: nodes !== null && typeof nodes === 'object' ? Object.keys(nodes).length : 0, file: `database:${row.skillId}@${row.version}`, status: 'draft',
    draftVersion: row.version, updatedAt: row.createdAt.toISOString(), updatedBy: row.createdBy,
  };
}
