import { z } from 'zod';
import { Role } from './auth.js';
import { MAX_OFFSET, NameText } from './common.js';
import { DataQuery } from './trial-queries.js';
import { RecordCrf } from './trial-record.js';
import { RuleAffectedByDictionary } from './trial-skill-tools.js';

export const TrialSite = z.object({ site: z.string().describe("REDCap data access group; '' when the project has none"), subjects: z.int() });
export type TrialSite = z.infer<typeof TrialSite>;

/** A trial project with its counts (GET /api/iit/projects). Open: more counts may come. */
export const TrialProject = z.looseObject({
  id: z.string(),
  name: z.string(),
  rows: z.int(),
  subjects: z.int(),
  sites: z.array(TrialSite),
  role: Role.describe('your role in this trial: the one an admin set for it, else your platform role'),
});
export type TrialProject = z.infer<typeof TrialProject>;
export const TrialProjectList = z.object({ projects: z.array(TrialProject) });

/** POST /api/iit/projects/:projectId/imports (multipart; each part arrives as `{ filename, data }`). */
export const ImportRequest = z.strictObject({
  dictionary: z.object({}).optional().describe('the REDCap data dictionary CSV'),
  events: z.object({}).optional().describe('the events CSV (longitudinal projects)'),
  arms: z.object({}).optional().describe('the arms CSV'),
  records: z.object({}).optional().describe('the records export CSV'),
  odm: z.object({}).optional().describe('instead of the CSV files: a CDISC ODM 1.3 XML file with metadata and clinical data (REDCap, OpenClinica, Castor)'),
});

/** A value imported although outside the dictionary's validation min/max; QC reports it. */
const ImportWarning = z.looseObject({
  line: z.int().describe('spreadsheet line of the row (header = line 1)'),
  recordId: z.string(),
  event: z.string(),
  field: z.string(),
  value: z.union([z.string(), z.number()]),
  min: z.string().nullable(),
  max: z.string().nullable(),
  message: z.string(),
});

/** What an import or a REDCap sync changed. Open, as it always was. */
export const ImportSummary = z.looseObject({
  fields: z.int(),
  events: z.int(),
  arms: z.int(),
  records: z.looseObject({ created: z.int(), updated: z.int(), unchanged: z.int() }),
  isDictionaryChanged: z.boolean(),
  isEventsChanged: z.boolean(),
  isArmsChanged: z.boolean(),
  warnings: z.array(ImportWarning).describe('values imported although outside their validation min/max: the first 100'),
  moreWarnings: z.int().optional().describe('present when warnings was cut: how many more such values were imported (QC reports each)'),
});
export type ImportSummary = z.infer<typeof ImportSummary>;

/** POST /api/iit/projects/:projectId/imports?preview=true checks the same parts and writes nothing. */
export const ImportQuery = z.strictObject({
  preview: z.boolean().default(false).describe('true: answer what the import would do and every problem it would refuse (200), writing nothing'),
});
export type ImportQuery = z.input<typeof ImportQuery>;

/** One problem of an import, by the line (and ODM element) and field a data manager fixes. */
export const ImportProblem = z.looseObject({
  source: z.string().describe('the file, e.g. records.csv'),
  line: z.int().describe('spreadsheet line (header = line 1), or the XML line of an ODM element'),
  element: z.string().optional().describe('ODM only: the element, e.g. ItemData[@ItemOID="age"] in SubjectData[@SubjectKey="101"]/...'),
  field: z.string().describe('the column, or "(row)" / "(file)"'),
  value: z.string(),
  problem: z.string(),
});
export type ImportProblem = z.infer<typeof ImportProblem>;

/** What an import of the sent files would do, or why it would be refused; nothing was written. */
export const ImportPreview = z.object({
  importable: z.boolean().describe('true when the files have no problems; then counts says what the import would write'),
  counts: ImportSummary.extend({
    forms: z.int(),
    subjects: z.int().describe('distinct record ids in the export'),
    rows: z.int().describe('(record, event) rows in the export'),
    rowsPerEvent: z.array(z.object({ eventName: z.string(), rows: z.int() })).describe("in schedule order; a classic project's one entry has eventName ''"),
  }).nullable().describe('records.created / updated / unchanged are counted against what the project holds now'),
  problemCount: z.int(),
  moreProblems: z.int().describe('problems beyond those listed'),
  problems: z.array(ImportProblem).describe('the first 50, as the import would list them'),
  rulesAffected: z.array(RuleAffectedByDictionary).optional().describe("importable previews: rules of the project's skills reading a field the new dictionary removes or changes"),
  changes: z
    .object({
      values: z.array(
        z.object({
          recordId: z.string(),
          eventName: z.string().describe("'' in a classic project"),
          field: z.string().describe('the field, or redcap_data_access_group when the row moves to another site'),
          oldValue: z.union([z.string(), z.number(), z.null()]),
          newValue: z.union([z.string(), z.number(), z.null()]),
          masked: z.boolean().optional().describe("true for an identifier field's values, null for whoever may not see identifiers"),
        }),
      ).describe('the first 100 values the import would change in stored rows, in file order'),
      moreValues: z.int().describe('changed values beyond those listed'),
    })
    .optional()
    .describe('importable previews: what "updated" rows would change, value by value'),
});
export type ImportPreview = z.infer<typeof ImportPreview>;

/** The project's REDCap API settings: never the token, only the name of the variable that holds it. */
export const RedcapSettings = z.object({
  projectId: z.string(),
  configured: z.boolean(),
  apiUrl: z.string().nullable(),
  tokenEnv: z.string().nullable().describe('the NAME of the server environment variable holding the token'),
  tokenSet: z.boolean().describe('whether that variable is set on the server (never its value)'),
  updatedBy: z.string().nullable(),
  updatedAt: z.string().nullable(),
});
export type RedcapSettings = z.infer<typeof RedcapSettings>;

/** PUT /api/iit/projects/:projectId/redcap */
export const SetRedcapRequest = z.strictObject({
  apiUrl: z.string().max(2000).describe('the REDCap API endpoint; https unless the server sets REDCAP_ALLOW_HTTP=true'),
  tokenEnv: z.string().max(100).optional().describe('the NAME of the server variable holding the token, starting REDCAP_TOKEN_; default REDCAP_TOKEN_<PROJECT ID>'),
});
export type SetRedcapRequest = z.infer<typeof SetRedcapRequest>;

/** Integer and number fields hold numbers; codes, dates and text hold strings; a blank cell is null. */
export const RecordValue = z.union([z.string(), z.number(), z.null()]);
export type RecordValue = z.infer<typeof RecordValue>;

/** One record row: a subject at one event. Open, as it always was. */
export const RecordEvent = z.looseObject({
  recordId: z.string(),
  eventName: z.string(),
  site: z.string(),
  data: z.record(z.string(), RecordValue),
  version: z.int().describe('bumped on every change'),
  updatedAt: z.string(),
  maskedFields: z.array(z.string()).optional().describe('identifier fields hidden from you: their value in `data` is null'),
});
export type RecordEvent = z.infer<typeof RecordEvent>;
export const RecordList = z.object({ records: z.array(RecordEvent) });

/** GET /api/iit/projects/:projectId/records */
export const RecordsQuery = z.strictObject({
  site: NameText.optional(),
  limit: z.int().min(1).max(5000).default(500),
  offset: z.int().min(0).max(MAX_OFFSET).default(0),
});

export const AuditEntityType = z.enum(['record', 'query', 'task_run', 'qc_run', 'project', 'member', 'document', 'user', 'token', 'settings', 'memory', 'memory_report', 'profile', 'agent_run', 'agent_config', 'skill']);
export type AuditEntityType = z.infer<typeof AuditEntityType>;

/** One entry of the append-only audit trail: who, when, what, old and new value, why. Open, as it always was. */
export const AuditEntry = z.looseObject({
  id: z.int(),
  projectId: z.string(),
  entityType: AuditEntityType,
  entityId: z.string(),
  action: z.string(),
  actor: z.string(),
  at: z.string(),
  oldValue: z.unknown(),
  newValue: z.unknown(),
  reason: z.string(),
  maskedFields: z.array(z.string()).optional().describe('identifier fields masked in oldValue and newValue'),
});
export type AuditEntry = z.infer<typeof AuditEntry>;
export const AuditEntryList = z.object({ entries: z.array(AuditEntry) });

/** GET /api/iit/projects/:projectId/audit */
export const AuditFilter = z.strictObject({ entityType: AuditEntityType.optional(), entityId: NameText.optional() });
export type AuditFilter = z.infer<typeof AuditFilter>;

/** GET /api/iit/projects/:projectId/audit/verify */
export const AuditVerification = z.object({
  projectId: z.string(),
  ok: z.boolean().describe("true when every entry's hash matches its content and links to the entry before it"),
  entries: z.int(),
  firstBadEntryId: z.int().optional().describe('the first entry that does not verify: the altered entry, or the entry after a deleted or forged one'),
  problem: z.string().optional(),
});
export type AuditVerification = z.infer<typeof AuditVerification>;

/** GET /api/iit/projects/:projectId/records/:recordId: one subject, every event, its queries and audit trail. */
export const TrialRecordView = z.object({
  recordId: z.string(),
  events: z.array(RecordEvent),
  queries: z.array(DataQuery.loose()),
  audit: z.array(AuditEntry),
  crf: RecordCrf.nullable().describe('the record as a CRF (forms, visits, values, queries per cell); null when the project has no data dictionary'),
});
export type TrialRecordView = z.infer<typeof TrialRecordView>;

