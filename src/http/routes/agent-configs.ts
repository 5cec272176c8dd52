import type { FastifyPluginAsync } from 'fastify';
import type { ConfigStore } from '../../runtime/staged/config-store.js';
import { routeSchema, type UpdateAgentConfigRequest } from '../../contract/index.js';
import { appendAuditEntries, PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { requireUser } from '../access.js';

const tags = ['admin'];

/**
 * Staged agents' configurations (seed 001): admins read every version and add a new one. A new version is checked
 * whole, every problem named with its stage and field, and the change is audited.
 */
export const agentConfigRoutes: FastifyPluginAsync<{ configs: ConfigStore; db: Db }> = async (app, { configs, db }) => {
  app.get<{ Params: { agentId: string } }>(
    '/api/admin/agent-configs/:agentId',
    { config: { access: 'admin' }, schema: { tags, summary: "A staged agent's configuration in use (the newest version)", ...routeSchema('GET /api/admin/agent-configs/:agentId') } },
    async (request) => configs.current(request.params.agentId),
  );

  app.get<{ Params: { agentId: string } }>(
    '/api/admin/agent-configs/:agentId/versions',
    { config: { access: 'admin' }, schema: { tags, summary: 'Every version, newest first: who made it and why', ...routeSchema('GET /api/admin/agent-configs/:agentId/versions') } },
    async (request) => {
      await configs.current(request.params.agentId);
      return { versions: await configs.versions(request.params.agentId) };
    },
  );

  app.get<{ Params: { agentId: string; version: string } }>(
    '/api/admin/agent-configs/:agentId/versions/:version',
    { config: { access: 'admin' }, schema: { tags, summary: 'One earlier version', ...routeSchema('GET /api/admin/agent-configs/:agentId/versions/:version') } },
    async (request) => {
      const version = Number(request.params.version);
      if (!Number.isInteger(version) || version < 1) throw new ClinAgentError('VALIDATION_FAILED', `version: "${request.params.version}" is not a version number; versions are 1, 2, 3...`, { field: 'version' });
      return configs.version(request.params.agentId, version);
    },
  );

  app.put<{ Params: { agentId: string }; Body: UpdateAgentConfigRequest }>(
    '/api/admin/agent-configs/:agentId',
    { config: { access: 'admin' }, schema: { tags, summary: 'Save a new version (the whole configuration); 422 names each problem by stage and field', ...routeSchema('PUT /api/admin/agent-configs/:agentId') } },
    async (request) => {
      const user = requireUser(request);
      const stored = await configs.update(request.params.agentId, request.body.config, user.id, request.body.note);
      await appendAuditEntries(db, [{ projectId: PLATFORM_AUDIT_SCOPE, entityType: 'agent_config', entityId: stored.agentId, action: 'version_added', actor: user.id, newValue: { version: stored.version, note: stored.note } }]);
      return stored;
    },
  );
};
