import type { FastifyPluginAsync } from 'fastify';
import type { ImportRedcapRulesRequest, SkillDryRunRequest, SkillImpactRequest } from '../../contract/index.js';
import { routeSchema } from '../../contract/index.js';
import type { SkillTools } from '../../trial/skill-tools/skill-tools.js';
import { requireUser } from '../access.js';

/** Tools for a skill before it is saved or activated: dry run, REDCap Data Quality rules import, amendment impact. Nothing is written. */
export const trialSkillToolRoutes: FastifyPluginAsync<{ skillTools: SkillTools }> = async (app, { skillTools }) => {
  app.post<{ Params: { projectId: string }; Body: SkillDryRunRequest }>('/api/iit/projects/:projectId/skills/dry-run', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'],
      summary: "Try a skill (YAML or definition) on one record or the whole trial before saving it: which records its hard rules would flag. Nothing is written; soft rules are listed as skipped. A skill reading an identifier field is refused (403, naming the fields) to members who may not see identifiers in the trial, whose verdicts would tell them the values. 422 SKILL_INVALID lists every problem of an invalid skill",
      ...routeSchema('POST /api/iit/projects/:projectId/skills/dry-run'),
    },
  }, async (request) => skillTools.dryRun(requireUser(request), request.params.projectId, request.body));

  app.post<{ Params: { projectId: string }; Body: ImportRedcapRulesRequest }>('/api/iit/projects/:projectId/skills/import-redcap-rules', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'],
      summary: "Turn REDCap Data Quality rules (the rules export CSV, or a list of {name, logic}) into a skill for the editor: one hard rule each, compiled to JSON Logic, with the severity sent for it (rules[].severity, or severities by rule name; error without one); a rule naming events of some arms applies only to the subjects of those arms. Rules with an unsupported function or a field the dictionary lacks are listed in problems and left out; rules reading an identifier field are refused (403) to members who may not see identifiers. preview: true lists every rule as it would be imported or why not (identifier refusals included) and builds no skill. Not saved",
      ...routeSchema('POST /api/iit/projects/:projectId/skills/import-redcap-rules'),
    },
  }, async (request) => skillTools.importRedcapRules(requireUser(request), request.params.projectId, request.body));

  app.post<{ Params: { projectId: string }; Body: SkillImpactRequest }>('/api/iit/projects/:projectId/skills/impact', {
    config: { access: 'write' },
    schema: {
      tags: ['trial QC'],
      summary: 'What activating a new version of a skill would change against the active one: rules added, removed and changed, their live queries, the records whose verdicts differ, and the record ids to re-run (POST /qc-runs recordIds). Refused (403) to members who may not see identifiers when a rule it adds, changes or removes reads one. Nothing is written',
      ...routeSchema('POST /api/iit/projects/:projectId/skills/impact'),
    },
  }, async (request) => skillTools.impact(requireUser(request), request.params.projectId, request.body));
};
