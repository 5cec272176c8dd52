import type { FastifyPluginAsync } from 'fastify';
import type { TrialQc } from '../../trial/trial-qc.js';
import type { AuditEntityType } from '../../trial/store/types.js';
import { requireUser } from '../access.js';
import { errorResponses } from '../schemas.js';

type Upload = { filename: string; data: Buffer };

const projectParams = { type: 'object', properties: { projectId: { type: 'string' } }, required: ['projectId'] } as const;
const anyObject = { type: 'object', additionalProperties: true } as const;

/** Trial data: projects with their counts, REDCap CSV import, records, and the read-only audit trail. */
export const trialDataRoutes: FastifyPluginAsync<{ qc: TrialQc }> = async (app, { qc }) => {
  app.get('/api/iit/projects', {
    schema: { tags: ['trial data'], summary: 'Trial projects the caller belongs to, with subject and record counts per site', response: { 200: { type: 'object', properties: { projects: { type: 'array', items: anyObject } } }, ...errorResponses } },
  }, async (request) => ({ projects: await qc.projects(requireUser(request)) }));

  app.post<{ Params: { projectId: string }; Body: { dictionary?: Upload; events?: Upload; records?: Upload } }>('/api/iit/projects/:projectId/imports', {
    config: { access: 'write', multipartOptions: { limits: { files: 3 } } },
    schema: {
      tags: ['trial data'],
      summary: 'Import a REDCap CSV export (multipart: dictionary, records, optional events). All-or-nothing: any bad row is reported with its line and field, and nothing is written.',
      consumes: ['multipart/form-data'],
      params: projectParams,
      body: { type: 'object', properties: { dictionary: { type: 'object' }, events: { type: 'object' }, records: { type: 'object' } }, additionalProperties: false },
      response: { 201: anyObject, ...errorResponses },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    await qc.assertMember(request.params.projectId, user);
    const text = (upload?: Upload) => (upload ? upload.data.toString('utf8') : undefined);
    const summary = await qc.importCsv(request.params.projectId, { dictionaryCsv: text(request.body?.dictionary) ?? '', eventsCsv: text(request.body?.events), recordsCsv: text(request.body?.records) ?? '' }, user.name);
    return reply.status(201).send(summary);
  });

  app.post<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/redcap-sync', {
    config: { access: 'write' },
    schema: {
      tags: ['trial data'], summary: 'Pull metadata, events and records from the REDCap API configured on the server (all-or-nothing, like an import)',
      params: projectParams,
      response: { 201: anyObject, ...errorResponses },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    await qc.assertMember(request.params.projectId, user);
    return reply.status(201).send(await qc.syncRedcap(request.params.projectId, user.name));
  });

  app.get<{ Params: { projectId: string }; Querystring: { site?: string; limit?: number; offset?: number } }>('/api/iit/projects/:projectId/records', {
    schema: {
      tags: ['trial data'], summary: 'Record rows (subject x event), optionally for one site',
      params: projectParams,
      querystring: { type: 'object', properties: { site: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 5000, default: 500 }, offset: { type: 'integer', minimum: 0, default: 0 } }, additionalProperties: false },
      response: { 200: { type: 'object', properties: { records: { type: 'array', items: anyObject } } }, ...errorResponses },
    },
  }, async (request) => {
    await qc.assertMember(request.params.projectId, requireUser(request));
    return { records: await qc.records(request.params.projectId, request.query) };
  });

  app.get<{ Params: { projectId: string; recordId: string } }>('/api/iit/projects/:projectId/records/:recordId', {
    schema: {
      tags: ['trial data'], summary: 'One subject: every event, its queries and its audit trail',
      params: { type: 'object', properties: { projectId: { type: 'string' }, recordId: { type: 'string' } }, required: ['projectId', 'recordId'] },
      response: { 200: { type: 'object', properties: { recordId: { type: 'string' }, events: { type: 'array', items: anyObject }, queries: { type: 'array', items: anyObject }, audit: { type: 'array', items: anyObject } } }, ...errorResponses },
    },
  }, async (request) => {
    await qc.assertMember(request.params.projectId, requireUser(request));
    return qc.record(request.params.projectId, request.params.recordId);
  });

  app.get<{ Params: { projectId: string }; Querystring: { entityType?: AuditEntityType; entityId?: string } }>('/api/iit/projects/:projectId/audit', {
    schema: {
      tags: ['trial data'], summary: 'The append-only audit trail (who, when, what, old and new value, why). There is no route to change it.',
      params: projectParams,
      querystring: { type: 'object', properties: { entityType: { type: 'string', enum: ['record', 'query', 'task_run', 'qc_run', 'project'] }, entityId: { type: 'string' } }, additionalProperties: false },
      response: { 200: { type: 'object', properties: { entries: { type: 'array', items: anyObject } } }, ...errorResponses },
    },
  }, async (request) => {
    await qc.assertMember(request.params.projectId, requireUser(request));
    return { entries: await qc.audit(request.params.projectId, request.query) };
  });
};
