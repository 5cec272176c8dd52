import { assertProjectWriter } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { identifierMask } from '../identifiers.js';
import { assertMayUseIdentifierRules } from '../skills/identifier-rule-access.js';
import type { Skill } from '../sop/load-skills.js';
import { skillAppliesTo } from '../sop/skill-catalog.js';
import { amendmentImpact } from './amendment-impact.js';
import { dryRunSkill } from './dry-run.js';
import { readProposedSkill, type ProposedSkillSource } from './proposed-skill.js';
import { importRedcapDqRules } from './redcap-dq-import.js';
import { previewRedcapRulesImport, readRedcapRulesRequest, redcapImportContext, type RedcapRulesImportRequest } from './redcap-dq-request.js';

interface SkillToolsDeps {
  db: Db;
  users: MembershipCheck;
  /** Soft rules' tools are checked against it, as activation checks them. */
  tools: ToolRegistry;
  /** The skills that run now (the active versions), where a proposed version finds the one it would replace. */
  activeSkills: () => readonly Skill[] | Promise<readonly Skill[]>;
}

/**
 * Tools for writing a skill before it is saved or activated: try it on the trial (dry run), import a site's REDCap
 * Data Quality rules as one, and see what a new version would change. None of them writes anything; each is for
 * members who may change the project's data (viewers get FORBIDDEN, non-members NOT_FOUND), checked here so every
 * caller gets the same answer.
 */
export function createSkillTools(deps: SkillToolsDeps) {
  return {
    /** Which records the skill's hard rules would flag, on `recordId` or every record; identifier values masked for `actor` as in queries. */
    dryRun: async (actor: User, projectId: string, input: ProposedSkillSource & { recordId?: string }) => {
      await assertProjectWriter(deps.users, actor, projectId);
      const skill = await readProposedSkill(deps, projectId, input, { actor, action: 'dry-run' });
      const mask = await identifierMask(deps.db, projectId, actor);
      return dryRunSkill(deps.db, { projectId, skill, recordId: input.recordId, mask });
    },
    /**
     * A skill holding the REDCap rules (a Data Quality rules CSV, or a list), for the editor; rules it cannot hold are
     * listed in `problems`. With `preview`, only the list of every rule as it would be imported or why not.
     */
    importRedcapRules: async (actor: User, projectId: string, input: RedcapRulesImportRequest) => {
      await assertProjectWriter(deps.users, actor, projectId);
      const read = readRedcapRulesRequest(input);
      const request = { rules: read.rules, skillId: input.skillId, name: input.name, projectId, ...(await redcapImportContext(deps.db, projectId)) };
      if (input.preview) return previewRedcapRulesImport(request, read.problems, (definition) => readProposedSkill(deps, projectId, { definition }, { actor, action: 'import' }));
      const imported = importRedcapDqRules(request);
      // The editor saves what it is given: it must pass the checks activation makes, so saving it cannot fail on them.
      await readProposedSkill(deps, projectId, { definition: imported.definition }, { actor, action: 'import' });
      return { ...imported, problems: [...read.problems, ...imported.problems] };
    },
    /** What activating the proposed version would change against the active one: rules, live queries, records, and the records to re-run. */
    impact: async (actor: User, projectId: string, input: ProposedSkillSource) => {
      await assertProjectWriter(deps.users, actor, projectId);
      const proposed = await readProposedSkill(deps, projectId, input, { actor, action: 'analyse the impact of' });
      const current = (await deps.activeSkills()).find((skill) => skill.id === proposed.id && skillAppliesTo(skill, projectId));
      // The active version's rules the proposed one changes or removes are evaluated too: reading an identifier, they are not for this actor either.
      await assertMayUseIdentifierRules(deps.db, actor, { projectIds: [projectId], definition: proposed, replaces: current ? [current] : [], action: 'analyse the impact of' });
      const mask = await identifierMask(deps.db, projectId, actor);
      return amendmentImpact(deps.db, { projectId, current, proposed, ...(mask.isMasking ? { hidden: mask.isIdentifier } : {}) });
    },
  };
}

export type SkillTools = ReturnType<typeof createSkillTools>;
