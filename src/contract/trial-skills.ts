import { z } from 'zod';
import { IdText } from './common.js';
import { SkillSourceFields } from './trial-skill-tools.js';

/** One thing wrong with a skill: where, what, and for a misspelt name the dictionary name it probably meant. */
export const SkillProblem = z.object({
  path: z.string().describe('e.g. nodes.checks.rules[2].logic.and[0].var, or "line 4, column 3" for YAML that cannot be read'),
  message: z.string(),
  suggestion: z.string().optional().describe('the closest known field or event name'),
  word: z.string().optional().describe('the name as written, which the suggestion replaces'),
});
export type SkillProblem = z.infer<typeof SkillProblem>;

/** POST /api/iit/skills/validate */
export const SkillValidation = z.object({
  valid: z.boolean(),
  problems: z.array(SkillProblem),
  notes: z.array(z.string()).describe('what was not checked and why (a project without a dictionary yet)'),
});
export type SkillValidation = z.infer<typeof SkillValidation>;

const SkillVersionStatus = z.enum(['draft', 'active', 'retired']);
type SkillVersionStatus = z.infer<typeof SkillVersionStatus>;

/** One stored version of a skill, as the editor shows it. */
export const SkillVersionView = z.object({
  skillId: z.string(),
  version: z.int(),
  status: SkillVersionStatus,
  definition: z.looseObject({}),
  yaml: z.string().describe('the YAML as its author wrote it, comments included'),
  createdBy: z.string(),
  createdAt: z.string(),
  comment: z.string(),
  activatedBy: z.string().nullable(),
  activatedAt: z.string().nullable(),
});
export type SkillVersionView = z.infer<typeof SkillVersionView>;

/** GET /api/iit/skills/:skillId */
export const SkillDetail = z.object({
  skillId: z.string(),
  active: SkillVersionView.nullable(),
  draft: SkillVersionView.nullable().describe('the newest draft saved after the active version, if any'),
});
export type SkillDetail = z.infer<typeof SkillDetail>;

export const SkillVersionSummary = SkillVersionView.omit({ definition: true, yaml: true }).extend({
  seedFile: z.string().nullable().describe('the skills/ file this version was seeded from'),
});
export type SkillVersionSummary = z.infer<typeof SkillVersionSummary>;
export const SkillVersionList = z.object({ versions: z.array(SkillVersionSummary) });
export type SkillVersionList = z.infer<typeof SkillVersionList>;

/** POST /api/iit/skills and PUT /api/iit/skills/:skillId/draft: the YAML or the definition, and why. */
export const SaveSkillRequest = z.strictObject({ ...SkillSourceFields, comment: z.string().max(2000).optional() });
export type SaveSkillRequest = z.infer<typeof SaveSkillRequest>;

/** A saved draft, with its problems (a draft may be unfinished; activation needs none). */
export const SavedSkillDraft = SkillVersionView.extend({ validation: SkillValidation });
export type SavedSkillDraft = z.infer<typeof SavedSkillDraft>;

/** POST /api/iit/skills/validate */
export const ValidateSkillRequest = z.strictObject({ ...SkillSourceFields, projectId: IdText.optional().describe("check against this project's dictionary; omitted: every project the skill applies to") });
export type ValidateSkillRequest = z.infer<typeof ValidateSkillRequest>;

/** POST /api/iit/skills/:skillId/activate */
export const ActivateSkillRequest = z.strictObject({
  version: z.int().min(1).optional().describe('omitted: the newest draft'),
  comment: z.string().max(2000).optional(),
});
export type ActivateSkillRequest = z.infer<typeof ActivateSkillRequest>;

export const ActivateSkillResult = z.object({
  activated: SkillVersionView,
  retiredVersion: z.int().nullable().describe('the version active before, now retired'),
  notes: z.array(z.string()),
});
export type ActivateSkillResult = z.infer<typeof ActivateSkillResult>;
