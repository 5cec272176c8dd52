import type { FastifyPluginAsync } from 'fastify';
import type { ImportService } from '../../trial/import/import-service.js';
import type { RecordService } from '../../trial/records/record-service.js';
import type { RedcapService } from '../../trial/redcap/redcap-service.js';
import type { AuditEntityType } from '../../trial/store/types.js';
import { ClinAgentError } from '../../core/errors.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

import type { Upload } from '../multipart-body.js';

/** Trial data: projects with their counts, REDCap CSV and ODM imports, the REDCap API, records, and the read-only audit trail. */
export const trialDataRoutes: FastifyPluginAsync<{ records: RecordService; imports: ImportService; redcap: RedcapService }> = async (app, { records, imports, redcap }) => {
  app.get('/api/iit/projects', {
    schema: { tags: ['trial data'], summary: 'Trial projects the caller belongs to, with subject and record counts per site', ...routeSchema('GET /api/iit/projects') },
  }, async (request) => ({ projects: await records.projects(requireUser(request)) }));

  app.post<{ Params: { projectId: string }; Querystring: { preview: boolean }; Body: { dictionary?: Upload; events?: Upload; arms?: Upload; records?: Upload; odm?: Upload } }>('/api/iit/projects/:projectId/imports', {
    config: { access: 'write', multipartOptions: { limits: { files: 4 } } },
    schema: {
      tags: ['trial data'],
      summary: 'Import a REDCap CSV export (multipart: dictionary, records, optional events and arms), UTF-8 or GBK/GB18030, or a CDISC ODM 1.3 XML file with metadata and clinical data (multipart: odm) from REDCap, OpenClinica or Castor. All-or-nothing: any bad row is reported with its line (or ODM element) and field, and nothing is written; values outside their validation min/max are imported and listed in warnings. With ?preview=true the same files are checked the same way and nothing is written: 200 with what the import would do (counts, records new/changed/unchanged against what is stored, warnings) or every problem it would refuse.',
      consumes: ['multipart/form-data'],
      ...routeSchema('POST /api/iit/projects/:projectId/imports'),
    },
  }, async (request, reply) => {
    // Bytes, not text: the import decodes them (UTF-8, or GBK/GB18030 from Excel) or refuses them by name.
    const body = request.body ?? {};
    const bytes = (upload?: Upload): Uint8Array | undefined => upload?.data;
    if (body.odm) {
      const csvParts = (['dictionary', 'events', 'arms', 'records'] as const).filter((part) => body[part]);
      if (csvParts.length > 0) {
        throw new ClinAgentError('VALIDATION_FAILED', `Send either an ODM file as "odm" or the REDCap CSV files, not both (this request also has ${csvParts.map((part) => `"${part}"`).join(', ')}); one import reads one export.`, { field: 'odm', alsoSent: csvParts });
      }
      const file = { odm: body.odm.data, fileName: body.odm.filename };
      if (request.query.preview) return reply.status(200).send(await imports.previewOdm(requireUser(request), request.params.projectId, file));
      return reply.status(201).send(await imports.importOdm(requireUser(request), request.params.projectId, file));
    }
    const files = {
      dictionaryCsv: bytes(body.dictionary) ?? '',
      eventsCsv: bytes(body.events),
      armsCsv: bytes(body.arms),
      recordsCsv: bytes(body.records) ?? '',
      fileNames: { dictionary: body.dictionary?.filename, events: body.events?.filename, arms: body.arms?.filename, records: body.records?.filename },
    };
    if (request.query.preview) return reply.status(200).send(await imports.previewCsv(requireUser(request), request.params.projectId, files));
    return reply.status(201).send(await imports.importCsv(requireUser(request), request.params.projectId, files));
  });

  app.post<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/redcap-sync', {
    config: { access: 'write' },
    schema: {
      tags: ['trial data'], summary: "Pull metadata, arms, events and records from this project's REDCap API (PI or admin; all-or-nothing, like an import)",
      ...routeSchema('POST /api/iit/projects/:projectId/redcap-sync'),
    },
  }, async (request, reply) => reply.status(201).send(await redcap.sync(requireUser(request), request.params.projectId)));

  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/redcap', {
    schema: {
      tags: ['trial data'], summary: "The project's REDCap API settings: apiUrl, tokenEnv (the NAME of the server variable holding the token) and whether that variable is set (never its value)",
      ...routeSchema('GET /api/iit/projects/:projectId/redcap'),
    },
  }, async (request) => redcap.settings(requireUser(request), request.params.projectId));

  app.put<{ Params: { projectId: string }; Body: { apiUrl: string; tokenEnv?: string } }>('/api/iit/projects/:projectId/redcap', {
    config: { access: 'admin' },
    schema: {
      tags: ['trial data'], summary: "Bind the project to its REDCap API: the URL (https) and the NAME of the server variable holding its token, REDCAP_TOKEN_... (admin; audited). The token itself is never sent or stored.",
      ...routeSchema('PUT /api/iit/projects/:projectId/redcap'),
    },
  }, async (request) => redcap.configure(requireUser(request), request.params.projectId, request.body));

  app.get<{ Params: { projectId: string }; Querystring: { site?: string; limit?: number; offset?: number } }>('/api/iit/projects/:projectId/records', {
    schema: {
      tags: ['trial data'], summary: 'Record rows (subject x event), optionally for one site. Identifier fields are null and listed in maskedFields unless you are admin, PI or were granted access to identifiers',
      ...routeSchema('GET /api/iit/projects/:projectId/records'),
    },
  }, async (request) => ({ records: await records.records(requireUser(request), request.params.projectId, request.query) }));

  app.get<{ Params: { projectId: string; recordId: string } }>('/api/iit/projects/:projectId/records/:recordId', {
    schema: {
      tags: ['trial data'], summary: 'One subject: every event, its queries and its audit trail (identifier fields masked as in the record list)',
      ...routeSchema('GET /api/iit/projects/:projectId/records/:recordId'),
    },
  }, async (request) => records.record(requireUser(request), request.params.projectId, request.params.recordId));

  app.get<{ Params: { projectId: string }; Querystring: { entityType?: AuditEntityType; entityId?: string } }>('/api/iit/projects/:projectId/audit', {
    schema: {
      tags: ['trial data'], summary: 'The append-only audit trail (who, when, what, old and new value, why). There is no route to change it.',
      ...routeSchema('GET /api/iit/projects/:projectId/audit'),
    },
  }, async (request) => ({ entries: await records.audit(requireUser(request), request.params.projectId, request.query) }));

  app.get<{ Params: { projectId: string } }>('/api/iit/projects/:projectId/audit/verify', {
    schema: {
      tags: ['trial data'], summary: "Recompute the audit trail's hash chain: ok, or the first entry that was altered, deleted or forged and why",
      ...routeSchema('GET /api/iit/projects/:projectId/audit/verify'),
    },
  }, async (request) => records.verifyAudit(requireUser(request), request.params.projectId));
};
