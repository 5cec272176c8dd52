import type { FastifyPluginAsync } from 'fastify';
import { routeSchema, type ActivateSkillRequest, type SaveSkillRequest, type ValidateSkillRequest } from '../../contract/index.js';
import { ClinAgentError } from '../../core/errors.js';
import type { SkillService } from '../../trial/skills/skill-service.js';
import type { SkillSourceInput } from '../../trial/skills/skill-source.js';
import { requireUser } from '../access.js';

const tags = ['trial QC'];

/**
 * QC skills stored with versions: read them, save drafts, validate against a trial's dictionary, activate without
 * a restart. Who may do what is decided in the skill service (admins everything; a project's writers the skills of
 * their projects only; viewers read).
 */
export const trialSkillRoutes: FastifyPluginAsync<{ skills: SkillService }> = async (app, { skills }) => {
  app.get('/api/iit/skills', {
    schema: {
      tags, summary: 'QC skills (SOP flowcharts) with their schedule and next run: those for every project and for your projects (admins: all, and the invalid skill files with their problems)',
      ...routeSchema('GET /api/iit/skills'),
    },
  }, async (request) => ({ skills: await skills.list(requireUser(request)) }));

  app.get<{ Params: { skillId: string } }>('/api/iit/skills/:skillId', {
    schema: { tags, summary: 'A skill: its active version and the newest draft after it (definition and YAML)', ...routeSchema('GET /api/iit/skills/:skillId') },
  }, async (request) => skills.get(requireUser(request), request.params.skillId));

  app.get<{ Params: { skillId: string } }>('/api/iit/skills/:skillId/versions', {
    schema: { tags, summary: 'Every version of a skill, newest first: status, who wrote and activated it, why', ...routeSchema('GET /api/iit/skills/:skillId/versions') },
  }, async (request) => ({ versions: await skills.versions(requireUser(request), request.params.skillId) }));

  app.get<{ Params: { skillId: string; version: string } }>('/api/iit/skills/:skillId/versions/:version', {
    schema: { tags, summary: 'One version of a skill, with its definition and YAML', ...routeSchema('GET /api/iit/skills/:skillId/versions/:version') },
  }, async (request) => skills.version(requireUser(request), request.params.skillId, versionNumber(request.params.version)));

  app.post<{ Body: SaveSkillRequest }>('/api/iit/skills', {
    config: { access: 'write' },
    schema: { tags, summary: 'Create a skill as draft version 1 (409 if the id exists); the response lists its problems', ...routeSchema('POST /api/iit/skills') },
  }, async (request, reply) => reply.status(201).send(await skills.create(requireUser(request), { ...sourceOf(request.body), comment: request.body.comment })));

  app.post<{ Body: ValidateSkillRequest }>('/api/iit/skills/validate', {
    // Checking a draft is part of writing one; a viewer reads skills and has nothing to check.
    config: { access: 'write' },
    schema: { tags, summary: "Check a skill (shape, flowchart, rules, and every field and event against the dictionary); writes nothing", ...routeSchema('POST /api/iit/skills/validate') },
  }, async (request) => skills.validate(requireUser(request), { ...sourceOf(request.body), projectId: request.body.projectId }));

  app.put<{ Params: { skillId: string }; Body: SaveSkillRequest }>('/api/iit/skills/:skillId/draft', {
    config: { access: 'write' },
    schema: { tags, summary: 'Save a new draft version of a skill; the response lists its problems', ...routeSchema('PUT /api/iit/skills/:skillId/draft') },
  }, async (request) => skills.saveDraft(requireUser(request), request.params.skillId, { ...sourceOf(request.body), comment: request.body.comment }));

  app.post<{ Params: { skillId: string }; Body: ActivateSkillRequest }>('/api/iit/skills/:skillId/activate', {
    config: { access: 'write' },
    schema: { tags, summary: 'Activate a version (default: the newest draft) for new runs, after validating it (422 lists each problem); audited', ...routeSchema('POST /api/iit/skills/:skillId/activate') },
  }, async (request) => skills.activate(requireUser(request), request.params.skillId, request.body ?? {}));
};

/** Exactly one of `yaml` and `definition`. */
function sourceOf(body: { yaml?: string; definition?: Record<string, unknown> }): SkillSourceInput {
  if (body.yaml !== undefined && body.definition === undefined) return { yaml: body.yaml };
  if (body.definition !== undefined && body.yaml === undefined) return { definition: body.definition };
  throw new ClinAgentError('VALIDATION_FAILED', 'Send the skill as either "yaml" (the text of a skill file) or "definition" (the same as a JSON object), not both and not neither.', { field: 'yaml' });
}

function versionNumber(text: string): number {
  const version = Number(text);
  if (!Number.isInteger(version) || version < 1) throw new ClinAgentError('VALIDATION_FAILED', `version: "${text.slice(0, 20)}" is not a version number; versions are 1, 2, 3...`, { field: 'version' });
  return version;
}
