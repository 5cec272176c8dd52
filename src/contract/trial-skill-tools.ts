import { z } from 'zod';
import { IdText, NameText } from './common.js';

/** The largest skill text accepted: the demo skill with 30 rules is 6 KB; a REDCap import of 2000 rules about 1 MB. */
const MAX_SKILL_SOURCE_CHARS = 2_000_000;

/** A skill as the editor holds it: the YAML text, or the same definition as an object (one of the two). */
export const SkillSourceFields = {
  yaml: z.string().max(MAX_SKILL_SOURCE_CHARS).optional().describe('the skill as YAML, as in a skill file'),
  definition: z.looseObject({}).optional().describe('instead of yaml: the same skill as a JSON object'),
};

/** POST /api/iit/projects/:projectId/skills/dry-run */
export const SkillDryRunRequest = z.strictObject({
  ...SkillSourceFields,
  recordId: IdText.optional().describe('try one record; omitted: every record of the trial'),
});
export type SkillDryRunRequest = z.infer<typeof SkillDryRunRequest>;

const SkippedNode = z.object({ node: z.string(), reason: z.string() });

/** A finding a QC run would raise; nothing was written. */
const DryRunFinding = z.object({
  recordId: z.string(),
  eventName: z.string(),
  node: z.string(),
  ruleId: z.string(),
  field: z.string(),
  message: z.string(),
  severity: z.enum(['error', 'warning', 'info']),
  value: z.unknown().describe('the value the rule read; null when masked'),
  masked: z.boolean().describe('true: the field is an identifier you may not see, so value is null'),
});
type DryRunFinding = z.infer<typeof DryRunFinding>;

export const SkillDryRunResult = z.object({
  skillId: z.string(),
  records: z.int().describe('records evaluated'),
  fired: z.int().describe('findings in all'),
  recordsFiring: z.int().describe('records with at least one finding'),
  firing: z.array(DryRunFinding).describe('the first 1000 findings, in record-id order'),
  truncated: z.boolean().describe('true when firing lists fewer than fired'),
  skippedNodes: z.array(SkippedNode).describe('soft-rule nodes, which a model would judge and are not tried'),
  elapsedMs: z.int(),
});
export type SkillDryRunResult = z.infer<typeof SkillDryRunResult>;

/** The skill id rule of a skill file, so a bad one is refused (400) before anything is built. */
const SkillId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/).describe('1-64 lowercase letters, digits, - or _');

const RuleSeverity = z.enum(['error', 'warning', 'info']);

/** POST /api/iit/projects/:projectId/skills/import-redcap-rules */
export const ImportRedcapRulesRequest = z.strictObject({
  csv: z.string().max(MAX_SKILL_SOURCE_CHARS).optional().describe("REDCap's Data Quality rules export (rule_name,rule_logic,real_time_execution)"),
  rules: z
    .array(z.strictObject({ name: NameText.min(1), logic: z.string().min(1).max(20_000), severity: RuleSeverity.optional().describe('the severity of its findings; default error') }))
    .max(2000)
    .optional()
    .describe('instead of csv: the rules as a list'),
  skillId: SkillId,
  name: NameText.min(1).describe("the skill's name"),
  preview: z.boolean().optional().describe('true: list each rule as it would be imported (id, field, severity, arms) or why not, and build no skill'),
  severities: z.record(NameText, RuleSeverity).optional().describe('severity by rule name (rule_name), e.g. {"Age under 18": "warning"}; rules without one get error'),
});
export type ImportRedcapRulesRequest = z.infer<typeof ImportRedcapRulesRequest>;

/** One rule sent, as it would be imported or why not. */
export const RedcapRuleListing = z.object({
  position: z.int().describe('1-based, in the order sent'),
  line: z.int().optional().describe('the CSV line, for rules sent as csv'),
  name: z.string(),
  logic: z.string(),
  status: z.enum(['importable', 'refused']),
  ruleId: z.string().optional(),
  field: z.string().optional().describe('the field its queries are raised on'),
  severity: RuleSeverity.optional(),
  arms: z.array(z.int()).optional().describe("it names events of these arms only, so it applies to their subjects only (REDCap's arm_num); absent: every subject"),
  reason: z.string().optional().describe('refused: why'),
});
export type RedcapRuleListing = z.infer<typeof RedcapRuleListing>;

export const ImportRedcapRulesResult = z.object({
  preview: z.literal(true).optional().describe('present for a preview, which has no yaml or definition'),
  yaml: z.string().optional().describe('the skill for the editor, each rule under a comment quoting its REDCap logic; not saved. Absent in a preview'),
  definition: z.looseObject({}).optional().describe('the same skill as an object; absent in a preview'),
  imported: z.int().describe('rules the skill holds (a preview: would hold)'),
  problems: z.array(z.object({ rule: z.string(), message: z.string() })).describe('rules left out and why (an unsupported function, a field or event the project lacks)'),
  rules: z.array(RedcapRuleListing).describe('every rule sent, in order, as imported or why not'),
});
export type ImportRedcapRulesResult = z.infer<typeof ImportRedcapRulesResult>;

/** POST /api/iit/projects/:projectId/skills/impact: the proposed new version of a skill. */
export const SkillImpactRequest = z.strictObject(SkillSourceFields);
export type SkillImpactRequest = z.infer<typeof SkillImpactRequest>;

const RuleRef = z.object({ ruleId: z.string(), node: z.string(), kind: z.enum(['hard', 'soft']), field: z.string() });

export const SkillImpact = z.object({
  skillId: z.string(),
  isNewSkill: z.boolean().describe('no version of the skill is active for this project yet'),
  rules: z.object({
    added: z.array(RuleRef),
    removed: z.array(RuleRef),
    changed: z.array(RuleRef.extend({ changes: z.array(z.string()).describe('field, logic, message, severity (soft: instruction, tools, ...)') })),
    unchanged: z.int(),
  }),
  openQueries: z.object({
    total: z.int(),
    byRule: z.array(z.object({ ruleId: z.string(), count: z.int(), action: z.enum(['close_if_rule_removed', 'recheck']) })),
  }),
  records: z.object({
    evaluated: z.int(),
    affected: z.int().describe("records where an added, removed or changed rule's verdict differs"),
    sample: z.array(z.object({ recordId: z.string(), ruleIds: z.array(z.string()) })),
  }),
  rerun: z.object({ recordIds: z.array(z.string()).describe('pass as recordIds to POST /qc-runs once the version is active'), count: z.int(), truncated: z.boolean() }),
  skippedNodes: z.array(SkippedNode),
  elapsedMs: z.int(),
});
export type SkillImpact = z.infer<typeof SkillImpact>;

/** A rule of a skill applying to the project that reads a field a new dictionary removes or changes (import preview). */
export const RuleAffectedByDictionary = z.object({
  skillId: z.string(),
  node: z.string(),
  ruleId: z.string(),
  field: z.string(),
  change: z.enum(['field_removed', 'type_changed', 'choices_changed']),
});
