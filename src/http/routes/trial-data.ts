import type { FastifyPluginAsync } from 'fastify';
import type { TrialQc } from '../../trial/trial-qc.js';
import type { AuditEntityType } from '../../trial/store/types.js';
import { requireUser } from '../access.js';
import { errorResponses, MAX_OFFSET } from '../schemas.js';

import type { Upload } from '../multipart-body.js';

const projectParams = { type: 'object', properties: { projectId: { type: 'string' } }, required: ['projectId'] } as const;
const anyObject = { type: 'object', additionalProperties: true } as const;
const redcapSettings = {
  type: 'object',
  properties: {
    projectId: { type: 'string' },
    configured: { type: 'boolean' },
    apiUrl: { type: ['string', 'null'] },
    tokenEnv: { type: ['string', 'null'] },
    tokenSet: { type: 'boolean' },
    updatedBy: { type: ['string', 'null'] },
    updatedAt: { type: ['string', 'null'] },
  },
} as const;

/** Trial data: projects with their counts, REDCap CSV import, records, and the read-only audit trail. */
export const trialDataRoutes: FastifyPluginAsync<{ qc: TrialQc }> = async (app, { qc }) => {
  app.get('/api/iit/projects', {
    schema: { tags: ['trial data'], summary: 'Trial projects the caller belongs to, with subject and record counts per site', response: { 200: { type: 'object', properties: { projects: { type: 'array', items: anyObject } } }, ...errorResponses } },
  }, async (request) => ({ projects: await qc.projects(requireUser(request)) }));

  app.post<{ Params: { projectId: string }; Body: { dictionary?: Upload; events?: Upload; arms?: Upload; records?: Upload } }>('/api/iit/projects/:projectId/imports', {
    config: { access: 'write', multipartOptions: { limits: { files: 4 } } },
    schema: {
      tags: ['trial data'],
      summary: 'Import a REDCap CSV export (multipart: dictionary, records, optional events and arms), UTF-8 or GBK/GB18030. All-or-nothing: any bad row is reported with its line and field, and nothing is written; values outside their validation min/max are imported and listed in warnings.',
      consumes: ['multipart/form-data'],
      params: projectParams,
      body: { type: 'object', properties: { dictionary: { type: 'object' }, events: { type: 'object' }, arms: { type: 'object' }, records: { type: 'object' } }, additionalProperties: false },
      response: { 201: anyObject, ...errorResponses },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    await qc.assertMember(request.params.projectId, user);
    // Bytes, not text: the import decodes them (UTF-8, or GBK/GB18030 from Excel) or refuses them by name.
    const body = request.body ?? {};
    const bytes = (upload?: Upload): Uint8Array | undefined => upload?.data;
    const summary = await qc.importCsv(
      request.params.projectId,
      {
        dictionaryCsv: bytes(body.dictionary) ?? '',
        eventsCsv: bytes(body.events),
        armsCsv: bytes(body.arms),
        recordsCsv: bytes(body.records) ?? '',
        fileNames: { dictionary: body.dictionary?.filename, events: body.events?.filename, arms: body.arms?.filename, records: body.records?.filename },
      },
      user.name,
    );
    return reply.status(201).send(summary);
  });

  app.post<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/redcap-sync', {
    config: { access: 'write' },
    schema: {
      tags: ['trial data'], summary: "Pull metadata, arms, events and records from this project's REDCap API (PI or admin; all-or-nothing, like an import)",
      params: projectParams,
      response: { 201: anyObject, ...errorResponses },
    },
  }, async (request, reply) => reply.status(201).send(await qc.syncRedcap(request.params.projectId, requireUser(request))));

  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/redcap', {
    schema: {
      tags: ['trial data'], summary: "The project's REDCap API settings: apiUrl, tokenEnv (the NAME of the server variable holding the token) and whether that variable is set (never its value)",
      params: projectParams,
      response: { 200: redcapSettings, ...errorResponses },
    },
  }, async (request) => qc.redcapSettings(request.params.projectId, requireUser(request)));

  app.put<{ Params: { projectId: string }; Body: { apiUrl: string; tokenEnv: string } }>('/api/iit/projects/:projectId/redcap', {
    config: { access: 'write' },
    schema: {
      tags: ['trial data'], summary: "Set the project's REDCap API URL and the NAME of the server environment variable holding its token (PI or admin; audited). The token itself is never sent or stored.",
      params: projectParams,
      body: { type: 'object', properties: { apiUrl: { type: 'string' }, tokenEnv: { type: 'string' } }, required: ['apiUrl', 'tokenEnv'], additionalProperties: false },
      response: { 200: redcapSettings, ...errorResponses },
    },
  }, async (request) => qc.configureRedcap(request.params.projectId, request.body, requireUser(request)));

  app.get<{ Params: { projectId: string }; Querystring: { site?: string; limit?: number; offset?: number } }>('/api/iit/projects/:projectId/records', {
    schema: {
      tags: ['trial data'], summary: 'Record rows (subject x event), optionally for one site. Identifier fields are null and listed in maskedFields unless you are admin, PI or were granted access to identifiers',
      params: projectParams,
      querystring: { type: 'object', properties: { site: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 5000, default: 500 }, offset: { type: 'integer', minimum: 0, maximum: MAX_OFFSET, default: 0 } }, additionalProperties: false },
      response: { 200: { type: 'object', properties: { records: { type: 'array', items: anyObject } } }, ...errorResponses },
    },
  }, async (request) => {
    const user = requireUser(request);
    await qc.assertMember(request.params.projectId, user);
    return { records: await qc.records(request.params.projectId, request.query, user) };
  });

  app.get<{ Params: { projectId: string; recordId: string } }>('/api/iit/projects/:projectId/records/:recordId', {
    schema: {
      tags: ['trial data'], summary: 'One subject: every event, its queries and its audit trail (identifier fields masked as in the record list)',
      params: { type: 'object', properties: { projectId: { type: 'string' }, recordId: { type: 'string' } }, required: ['projectId', 'recordId'] },
      response: { 200: { type: 'object', properties: { recordId: { type: 'string' }, events: { type: 'array', items: anyObject }, queries: { type: 'array', items: anyObject }, audit: { type: 'array', items: anyObject } } }, ...errorResponses },
    },
  }, async (request) => {
    const user = requireUser(request);
    await qc.assertMember(request.params.projectId, user);
    return qc.record(request.params.projectId, request.params.recordId, user);
  });

  app.get<{ Params: { projectId: string }; Querystring: { entityType?: AuditEntityType; entityId?: string } }>('/api/iit/projects/:projectId/audit', {
    schema: {
      tags: ['trial data'], summary: 'The append-only audit trail (who, when, what, old and new value, why). There is no route to change it.',
      params: projectParams,
      querystring: { type: 'object', properties: { entityType: { type: 'string', enum: ['record', 'query', 'task_run', 'qc_run', 'project', 'member', 'document', 'user', 'token', 'settings'] }, entityId: { type: 'string' } }, additionalProperties: false },
      response: { 200: { type: 'object', properties: { entries: { type: 'array', items: anyObject } } }, ...errorResponses },
    },
  }, async (request) => {
    const user = requireUser(request);
    await qc.assertMember(request.params.projectId, user);
    return { entries: await qc.audit(request.params.projectId, request.query, user) };
  });

  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/audit/verify', {
    schema: {
      tags: ['trial data'], summary: "Recompute the audit trail's hash chain: ok, or the first entry that was altered, deleted or forged and why",
      params: projectParams,
      response: { 200: { type: 'object', properties: { projectId: { type: 'string' }, ok: { type: 'boolean' }, entries: { type: 'integer' }, firstBadEntryId: { type: 'integer' }, problem: { type: 'string' } } }, ...errorResponses },
    },
  }, async (request) => {
    await qc.assertMember(request.params.projectId, requireUser(request));
    return qc.verifyAudit(request.params.projectId);
  });
};
