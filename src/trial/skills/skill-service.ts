import type { MembershipCheck } from '../../core/auth/membership.js';
import type { ProjectDirectory } from '../../core/auth/projects.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { assertProjectReader } from '../../core/auth/project-access.js';
import type { SkillCatalog } from '../sop/skill-catalog.js';
import { assertMayUseIdentifierRules, identifierRuleNotes } from './identifier-rule-access.js';
import { assertCanEditSkill, canReadSkill, unknownSkill } from './skill-access.js';
import { auditSkillChange, definitionProjects, unionProjects } from './skill-audit.js';
import { allProjectIds, loadDictionaries } from './load-dictionaries.js';
import { activeSkillSummaries, listSkillSummaries } from './list-skills.js';
import { readSkillSource, type SkillSourceInput } from './skill-source.js';
import { createSkillStore, versionNotFound, type SkillVersionRow, type SkillVersionSummary } from './skill-store.js';
import { validateSkill, type SkillValidation } from './validate-skill.js';
import { withTransaction } from '../../core/db/transaction.js';

interface SkillServiceDeps {
  db: Db;
  users: MembershipCheck & ProjectDirectory;
  tools: ToolRegistry;
  /** Refreshed after an activation, so this process serves the new version for the next run at once. */
  catalog: SkillCatalog;
}

/** One stored version as the editor shows it: the definition and the YAML its author wrote. */
export interface SkillVersionView {
  skillId: string;
  version: number;
  status: SkillVersionRow['status'];
  definition: Record<string, unknown>;
  yaml: string;
  createdBy: string;
  createdAt: string;
  comment: string;
  activatedBy: string | null;
  activatedAt: string | null;
}

// The same pattern the skill schema holds ids to; checked before a draft is stored under it.
const SKILL_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * Skills written, validated and activated through the API (the console's skill editor). Every function takes the
 * acting user first and checks access here (skill-access.ts), so every caller gets the same answer. Drafts may
 * be unfinished (the editor saves work in progress, with its problems listed); activation requires a skill with
 * no problem at all, checked against the dictionary of every project it applies to.
 */
export function createSkillService(deps: SkillServiceDeps) {
  const { db, users } = deps;
  const store = createSkillStore(db);

  async function rowsOf(actor: User, skillId: string): Promise<SkillVersionRow[]> {
    const rows = await store.rows(skillId);
    if (!rows.length || !(await canReadSkill(users, actor, scopeOf(rows)))) throw unknownSkill(skillId);
    return rows;
  }

  /**
   * Checks a definition against the dictionaries of `projectIds` (null: every project). With `actor`, only their
   * projects are read, so suggestions never name another trial's fields; activation checks every project.
   */
  async function validateFor(definition: unknown, projectIds: readonly string[] | null, actor?: User): Promise<SkillValidation> {
    const visible = actor ? (await users.listProjects(actor)).map((p) => p.id) : await allProjectIds(db);
    const wanted = projectIds ?? visible;
    const checked = wanted.filter((id) => visible.includes(id));
    const { dictionaries, skipped } = await loadDictionaries(db, checked);
    const result = validateSkill(definition, { tools: deps.tools, dictionaries, skipped });
    const unchecked = wanted.filter((id) => !checked.includes(id));
    if (unchecked.length) result.notes.push(`not checked against ${unchecked.map((p) => `"${p}"`).join(', ')}: ${actor ? 'not a project of yours' : 'no such project'}`);
    return result;
  }

  async function saveDraft(actor: User, skillId: string, input: SkillSourceInput & { comment?: string }, isNew: boolean) {
    const source = readSkillSource(input);
    if (!source.definition) throw invalidSource(source.problems);
    const declared = source.definition.id;
    if (isNew && (typeof declared !== 'string' || !SKILL_ID.test(declared))) {
      throw new ClinAgentError('VALIDATION_FAILED', 'id: a skill needs an id of 1-64 lowercase letters, digits, - or _ (e.g. "bp-checks").', { field: 'id', problems: [{ path: 'id', message: 'must be 1-64 lowercase letters, digits, - or _' }] });
    }
    if (!isNew && declared !== skillId) {
      throw new ClinAgentError('VALIDATION_FAILED', `id: this is skill "${skillId}"; its id cannot change (found ${JSON.stringify(declared ?? null).slice(0, 80)}). Create a new skill with POST /api/iit/skills instead.`, { field: 'id', problems: [{ path: 'id', message: `must stay "${skillId}"` }] });
    }
    const projects = definitionProjects(source.definition);
    const existing = isNew ? [] : await store.rows(skillId);
    if (!isNew && !existing.length) throw unknownSkill(skillId);
    await assertCanEditSkill(users, actor, skillId, { ...(isNew ? {} : { scope: scopeOf(existing) }), projects });
    await assertMayUseIdentifierRules(db, actor, { projectIds: unionProjects([projects, isNew ? [] : scopeOf(existing)]), definition: source.definition, replaces: replacedVersions(existing), action: 'save' });
    const row = await withTransaction(db, async (tx) => {
      const txStore = createSkillStore(tx);
      if (isNew && (await txStore.latestVersion(skillId)) !== undefined) {
        throw new ClinAgentError('CONFLICT_STATE', `A skill with id "${skillId}" already exists. Choose another id, or save a draft of it with PUT /api/iit/skills/${skillId}/draft.`, { skillId, field: 'id' });
      }
      const draft = (await txStore.addDraft(skillId, { definition: source.definition, sourceYaml: source.sourceYaml, createdBy: actor.name, comment: input.comment }))!;
      await auditSkillChange(tx, { skillId, action: 'draft_saved', actor: actor.name, projects: unionProjects([projects, ...existing.map((r) => definitionProjects(r.definition))]), newValue: { version: draft.version, comment: draft.comment } });
      return draft;
    });
    return { ...view(row), validation: await validateFor(row.definition, projects, actor) };
  }

  return {
    /** GET /api/iit/skills: the skills `actor` may know of, with version, drafts and (admins) invalid ones. */
    list: (actor: User) => listSkillSummaries({ db, users, catalog: deps.catalog }, actor),

    /** Every active skill, for code acting for the system (the assistant picks the skills of its project from these). */
    active: () => activeSkillSummaries(deps.catalog),

    /** The active version and the newest draft after it (the editor opens the draft when there is one). */
    async get(actor: User, skillId: string) {
      const rows = await rowsOf(actor, skillId);
      const active = rows.find((r) => r.status === 'active');
      const draft = rows.find((r) => r.status === 'draft' && (!active || r.version > active.version));
      return { skillId, active: active ? view(active) : null, draft: draft ? view(draft) : null };
    },

    async versions(actor: User, skillId: string) {
      await rowsOf(actor, skillId);
      return (await store.versions(skillId)).map(summaryView);
    },

    async version(actor: User, skillId: string, version: number): Promise<SkillVersionView> {
      const rows = await rowsOf(actor, skillId);
      const row = rows.find((r) => r.version === version);
      if (!row) throw versionNotFound(skillId, version, rows.map((r) => r.version));
      return view(row);
    },

    /** A new skill as draft version 1; 409 when the id exists. */
    async create(actor: User, input: SkillSourceInput & { comment?: string }) {
      const source = readSkillSource(input);
      if (!source.definition) throw invalidSource(source.problems);
      const id = typeof source.definition.id === 'string' ? source.definition.id : '';
      return saveDraft(actor, id, input, true);
    },

    saveDraft: (actor: User, skillId: string, input: SkillSourceInput & { comment?: string }) => saveDraft(actor, skillId, input, false),

    /** Never writes. With `projectId`, against that project's dictionary; else against the skill's projects. */
    async validate(actor: User, input: SkillSourceInput & { projectId?: string }): Promise<SkillValidation> {
      const source = readSkillSource(input);
      if (!source.definition) return { valid: false, problems: source.problems, notes: [] };
      if (input.projectId !== undefined) await assertProjectReader(users, actor, input.projectId);
      const projectIds = input.projectId !== undefined ? [input.projectId] : definitionProjects(source.definition);
      const result = await validateFor(source.definition, projectIds, actor);
      // Rules on identifier fields the author may not see: saving would be refused, so the editor says so now.
      const readable = projectIds === null ? [] : (await users.listProjects(actor)).map((p) => p.id).filter((id) => projectIds.includes(id));
      result.notes.push(...(await identifierRuleNotes(db, actor, readable, source.definition)));
      return result;
    },

    /**
     * Makes a version active (by default the newest draft): validated first (422 listing every problem), then the
     * previous active version retired, audited, and this process's catalog refreshed so the next run uses it.
     */
    async activate(actor: User, skillId: string, input: { version?: number; comment?: string }) {
      const rows = await rowsOf(actor, skillId);
      const active = rows.find((r) => r.status === 'active');
      const target = input.version === undefined ? rows.find((r) => r.status === 'draft' && (!active || r.version > active.version)) : rows.find((r) => r.version === input.version);
      if (!target) {
        if (input.version !== undefined) throw versionNotFound(skillId, input.version, rows.map((r) => r.version));
        throw new ClinAgentError('CONFLICT_STATE', `Skill "${skillId}" has no draft newer than its active version ${active?.version}. Save a draft first (PUT /api/iit/skills/${skillId}/draft), or name the version to activate.`, { skillId });
      }
      const projects = definitionProjects(target.definition);
      await assertCanEditSkill(users, actor, skillId, { scope: scopeOf(rows), projects });
      await assertMayUseIdentifierRules(db, actor, { projectIds: unionProjects([projects, scopeOf(rows)]), definition: target.definition, replaces: active ? [active.definition] : [], action: 'activate' });
      // Checked against every project the skill applies to, whoever activates it: those are the trials it will run on.
      const validation = await validateFor(target.definition, projects);
      if (!validation.valid) {
        throw new ClinAgentError('SKILL_INVALID', `Version ${target.version} of skill "${skillId}" cannot be activated; fix each problem and save a new draft:\n- ${validation.problems.slice(0, 20).map((p) => `${p.path}: ${p.message}`).join('\n- ')}`, { skillId, version: target.version, problems: validation.problems, notes: validation.notes });
      }
      const result = await withTransaction(db, async (tx) => {
        const changed = await createSkillStore(tx).activate(skillId, target.version, actor.name);
        await auditSkillChange(tx, {
          skillId, action: 'activated', actor: actor.name, projects: unionProjects([projects, ...(changed.retired ? [definitionProjects(changed.retired.definition)] : [])]),
          oldValue: changed.retired ? { activeVersion: changed.retired.version } : undefined, newValue: { activeVersion: changed.activated.version }, reason: input.comment ?? '',
        });
        return changed;
      });
      await deps.catalog.refresh();
      return { activated: view(result.activated), retiredVersion: result.retired?.version ?? null, notes: validation.notes };
    },
  };
}

export type SkillService = ReturnType<typeof createSkillService>;

/** What a new draft takes the place of: the active version and the newest one (rows are newest first). */
function replacedVersions(rows: readonly SkillVersionRow[]): unknown[] {
  const active = rows.find((r) => r.status === 'active');
  return [...new Set([active, rows[0]])].flatMap((row) => (row ? [row.definition] : []));
}

function scopeOf(rows: readonly SkillVersionRow[]): string[] | null {
  return unionProjects(rows.map((r) => definitionProjects(r.definition)));
}

function invalidSource(problems: ReadonlyArray<{ path: string; message: string }>): ClinAgentError {
  return new ClinAgentError('VALIDATION_FAILED', `The skill cannot be read; fix each problem:\n- ${problems.map((p) => `${p.path}: ${p.message}`).join('\n- ')}`, { problems });
}

function view(row: SkillVersionRow): SkillVersionView {
  return {
    skillId: row.skillId, version: row.version, status: row.status, definition: row.definition, yaml: row.sourceYaml, createdBy: row.createdBy, createdAt: row.createdAt.toISOString(),
    comment: row.comment, activatedBy: row.activatedBy, activatedAt: row.activatedAt?.toISOString() ?? null,
  };
}

function summaryView(row: SkillVersionSummary) {
  return {
    skillId: row.skillId, version: row.version, status: row.status, createdBy: row.createdBy, createdAt: row.createdAt.toISOString(), comment: row.comment,
    activatedBy: row.activatedBy, activatedAt: row.activatedAt?.toISOString() ?? null, seedFile: row.seedFile,
  };
}
