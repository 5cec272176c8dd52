import type { z } from 'zod';
import { AGENT_STREAM_DESCRIPTION } from './agent-stream.js';
import { CHAT_STREAM_DESCRIPTION } from './assistant-stream.js';
import { CONSULT_STREAM_DESCRIPTION, ConsultList, ConsultMessageRequest, ConsultReply, ConsultSession, DossierQuery, StartConsultRequest, StartConsultResponse } from './consult.js';
import {
  ActionCallbackRequest,
  ActionCallbackResponse,
  AgentConfigVersionList,
  AgentConfigView,
  PatchProtocolContextRequest,
  PROTOCOL_CHAT_STREAM_DESCRIPTION,
  ProtocolChatRequest,
  ProtocolChatResponse,
  ProtocolChecksResponse,
  ProtocolContextResponse,
  ProtocolExportQuery,
  ProtocolList,
  StageCompleteRequest,
  StageCompleteResponse,
  StartProtocolRequest,
  StartProtocolResponse,
  UpdateAgentConfigRequest,
} from './protocol-agent.js';
import { AgentList } from './agents.js';
import { AgentResult, AgentRunRequest, DocumentList, DocumentListQuery, IngestDocumentRequest, IngestDocumentResponse, ScenarioList, SearchIndexQuery, SearchIndexStatus } from './agent.js';
import {
  AccountToken,
  AddMemberRequest,
  CreateProjectRequest,
  CreateUserRequest,
  CreateUserResponse,
  SignInLinkResponse,
  IssueTokenRequest,
  IssueTokenResponse,
  LoginRequest,
  LoginResponse,
  ManagedUser,
  Me,
  MemberAccess,
  Project,
  ProjectList,
  SetMemberAccessRequest,
  SetRoleRequest,
  TokenList,
  UserList,
} from './auth.js';
import {
  AddFactsRequest,
  ChatAnswer,
  ChatRequest,
  Feedback,
  FeedbackList,
  FeedbackRequest,
  HotMemory,
  HotMemoryVersionList,
  MemoryReportList,
  MemoryReportQuery,
  MemoryWriteResult,
  RegenerateReportRequest,
  RegenerateReportResult,
  ReplaceMemoryRequest,
  RollbackMemoryRequest,
  UpdateProfileRequest,
  UserProfile,
} from './assistant.js';
import { ApiErrorBody, errorResponses, NoContent, textParams, uuidParams } from './common.js';
import { AddProjectMemberRequest, ProjectMember, ProjectMemberList } from './project-members.js';
import { ConversationDetail, ConversationList, ConversationListQuery } from './conversations.js';
import { AgentRun, AgentRunAnswerRequest, AgentRunDecisionRequest, AgentRunList, AgentRunListQuery, StartAgentRunRequest } from './agent-runs.js';
import { jsonSchema, type JsonSchema } from './json-schema.js';
import { Health } from './system.js';
import { Trace, TraceList, TraceListQuery } from './traces.js';
import {
  AuditEntryList,
  AuditFilter,
  AuditVerification,
  ImportPreview,
  ImportQuery,
  ImportRequest,
  ImportSummary,
  RecordList,
  RecordsQuery,
  RedcapSettings,
  SetRedcapRequest,
  TrialProjectList,
  TrialRecordView,
} from './trial-data.js';
import { QcRunList, QcRunProgress, QcSkillList, ReviewDecisionsRequest, ReviewDecisionsResponse, ReviewTaskRunRequest, StartQcRunRequest, TaskRun, TaskRunFilter, TaskRunList } from './trial-qc.js';
import { BulkCloseQueriesRequest, BulkCloseQueriesResponse, DataQuery, DataQueryListQuery, DataQueryPage, ReportQuery, TransitionQueryParams, TransitionQueryRequest } from './trial-queries.js';
import { SampleSizeRequest, SampleSizeResponse } from './tools.js';
import { ActivateSkillRequest, ActivateSkillResult, SavedSkillDraft, SaveSkillRequest, SkillDetail, SkillValidation, SkillVersionList, SkillVersionView, ValidateSkillRequest } from './trial-skills.js';
import { ImportRedcapRulesRequest, ImportRedcapRulesResult, SkillDryRunRequest, SkillDryRunResult, SkillImpact, SkillImpactRequest } from './trial-skill-tools.js';
import { RuleYieldList, RuleYieldQuery } from './trial-rule-yield.js';
import { IngestProtocolDocumentRequest, IngestProtocolDocumentResponse, ProtocolDocumentList, ProtocolDocumentParams, protocolErrorResponses } from './trial-protocol.js';

/** A response that is not one JSON value (server-sent events): described in words, sent as the route writes it. */
interface StreamResponse {
  contentType: string;
  description: string;
}

/** What one route accepts and answers. Tags and summaries stay with the route; shapes live here. */
interface RouteContract {
  params?: z.ZodType;
  querystring?: z.ZodType;
  body?: z.ZodType;
  /** By status. A route without a 200 schema (the report: JSON, CSV or XLSX) is serialized as sent. */
  response?: Partial<Record<number, z.ZodType | StreamResponse>>;
}

const projectParams = textParams('projectId');

/**
 * Every HTTP route, keyed as `METHOD /path` (Fastify's path syntax). src/http/routes take their schemas from
 * here (`routeSchema`), src/http/contract-agreement.test.ts checks that each registered route does, and the
 * console types its calls with the types inferred from the same zod schemas.
 */
export const routes = {
  'GET /api/health': { response: { 200: Health } },

  'POST /api/auth/login': { body: LoginRequest, response: { 200: LoginResponse, ...errorResponses, 429: ApiErrorBody } },
  'GET /api/me': { response: { 200: Me, ...errorResponses } },
  'GET /api/projects': { response: { 200: ProjectList, ...errorResponses } },
  'POST /api/projects': { body: CreateProjectRequest, response: { 201: Project, ...errorResponses } },
  'POST /api/projects/:id/members': { params: textParams('id'), body: AddMemberRequest, response: { 204: NoContent, ...errorResponses } },
  'PATCH /api/projects/:projectId/members/:userId': { params: textParams('projectId', 'userId'), body: SetMemberAccessRequest, response: { 200: MemberAccess, ...errorResponses } },
  'GET /api/iit/projects/:projectId/members': { params: projectParams, response: { 200: ProjectMemberList, ...errorResponses } },
  'POST /api/iit/projects/:projectId/members': { params: projectParams, body: AddProjectMemberRequest, response: { 201: ProjectMember, ...errorResponses } },
  'DELETE /api/iit/projects/:projectId/members/:userId': { params: textParams('projectId', 'userId'), response: { 204: NoContent, ...errorResponses } },

  'GET /api/users': { response: { 200: UserList, ...errorResponses } },
  'POST /api/users': { body: CreateUserRequest, response: { 201: CreateUserResponse, ...errorResponses } },
  'PATCH /api/users/:id': { params: uuidParams('id'), body: SetRoleRequest, response: { 200: ManagedUser, ...errorResponses } },
  'POST /api/users/:id/deactivate': { params: uuidParams('id'), response: { 200: ManagedUser, ...errorResponses } },
  'POST /api/users/:id/reactivate': { params: uuidParams('id'), response: { 200: ManagedUser, ...errorResponses } },
  'POST /api/users/:id/tokens': { params: uuidParams('id'), body: IssueTokenRequest, response: { 201: IssueTokenResponse, ...errorResponses } },
  'POST /api/users/:id/sign-in-link': { params: uuidParams('id'), response: { 201: SignInLinkResponse, ...errorResponses } },
  'GET /api/users/:id/tokens': { params: uuidParams('id'), response: { 200: TokenList, ...errorResponses } },
  'POST /api/tokens/:id/revoke': { params: uuidParams('id'), response: { 200: AccountToken, ...errorResponses } },

  'GET /api/scenarios': { response: { 200: ScenarioList, ...errorResponses } },
  'GET /api/agents': { response: { 200: AgentList, ...errorResponses } },
  'POST /api/agent/run': { body: AgentRunRequest, response: { 200: AgentResult, ...errorResponses } },
  'POST /api/tools/sample-size': { body: SampleSizeRequest, response: { 200: SampleSizeResponse, ...errorResponses } },
  'POST /api/agent/run/stream': { body: AgentRunRequest, response: { 200: { contentType: 'text/event-stream', description: AGENT_STREAM_DESCRIPTION }, ...errorResponses } },
  'GET /api/rag/documents': { querystring: DocumentListQuery, response: { 200: DocumentList, ...errorResponses } },
  'POST /api/rag/documents': { body: IngestDocumentRequest, response: { 201: IngestDocumentResponse, ...errorResponses } },
  'DELETE /api/rag/documents/:documentId': { params: textParams('documentId'), response: { 204: NoContent, ...errorResponses } },
  'GET /api/rag/search-index': { querystring: SearchIndexQuery, response: { 200: SearchIndexStatus, ...errorResponses } },
  'GET /api/traces': { querystring: TraceListQuery, response: { 200: TraceList, ...errorResponses } },
  'GET /api/traces/:id': { params: uuidParams('id'), response: { 200: Trace, ...errorResponses } },
  'POST /api/agent/runs': { body: StartAgentRunRequest, response: { 202: AgentRun, ...errorResponses } },
  'GET /api/agent/runs': { querystring: AgentRunListQuery, response: { 200: AgentRunList, ...errorResponses } },
  'GET /api/agent/runs/:id': { params: uuidParams('id'), response: { 200: AgentRun, ...errorResponses } },
  'POST /api/agent/runs/:id/answer': { params: uuidParams('id'), body: AgentRunAnswerRequest, response: { 200: AgentRun, ...errorResponses } },
  'POST /api/agent/runs/:id/decision': { params: uuidParams('id'), body: AgentRunDecisionRequest, response: { 200: AgentRun, ...errorResponses } },
  'POST /api/agent/runs/:id/retry': { params: uuidParams('id'), response: { 202: AgentRun, ...errorResponses } },
  'POST /api/agent/runs/:id/cancel': { params: uuidParams('id'), response: { 200: AgentRun, ...errorResponses } },
  'POST /api/aia/protocol-agent/conversations': { body: StartProtocolRequest, response: { 201: StartProtocolResponse, ...errorResponses } },
  'GET /api/aia/protocol-agent/conversations': { response: { 200: ProtocolList, ...errorResponses } },
  'POST /api/aia/protocol-agent/chat': { body: ProtocolChatRequest, response: { 200: ProtocolChatResponse, ...errorResponses } },
  'POST /api/aia/protocol-agent/chat/stream': { body: ProtocolChatRequest, response: { 200: { contentType: 'text/event-stream', description: PROTOCOL_CHAT_STREAM_DESCRIPTION }, ...errorResponses } },
  'POST /api/aia/protocol-agent/stage/complete': { body: StageCompleteRequest, response: { 200: StageCompleteResponse, ...errorResponses } },
  'GET /api/aia/protocol-agent/context/:conversationId': { params: uuidParams('conversationId'), response: { 200: ProtocolContextResponse, ...errorResponses } },
  'PATCH /api/aia/protocol-agent/context/:conversationId': { params: uuidParams('conversationId'), body: PatchProtocolContextRequest, response: { 200: ProtocolContextResponse, ...errorResponses } },
  'POST /api/aia/protocol-agent/action-callback': { body: ActionCallbackRequest, response: { 200: ActionCallbackResponse, ...errorResponses } },
  'GET /api/aia/protocol-agent/trace/:traceId': { params: uuidParams('traceId'), response: { 200: Trace, ...errorResponses } },
  'GET /api/aia/protocol-agent/export/:conversationId': { params: uuidParams('conversationId'), querystring: ProtocolExportQuery },
  'GET /api/aia/protocol-agent/checks/:conversationId': { params: uuidParams('conversationId'), response: { 200: ProtocolChecksResponse, ...errorResponses } },
  'GET /api/admin/agent-configs/:agentId': { params: textParams('agentId'), response: { 200: AgentConfigView, ...errorResponses } },
  'GET /api/admin/agent-configs/:agentId/versions': { params: textParams('agentId'), response: { 200: AgentConfigVersionList, ...errorResponses } },
  'GET /api/admin/agent-configs/:agentId/versions/:version': { params: textParams('agentId', 'version'), response: { 200: AgentConfigView, ...errorResponses } },
  'PUT /api/admin/agent-configs/:agentId': { params: textParams('agentId'), body: UpdateAgentConfigRequest, response: { 200: AgentConfigView, ...errorResponses } },
  'POST /api/consult/sessions': { body: StartConsultRequest, response: { 201: StartConsultResponse, ...errorResponses } },
  'GET /api/consult/sessions': { response: { 200: ConsultList, ...errorResponses } },
  'GET /api/consult/sessions/:id': { params: uuidParams('id'), response: { 200: ConsultSession, ...errorResponses } },
  'POST /api/consult/sessions/:id/messages': { params: uuidParams('id'), body: ConsultMessageRequest, response: { 200: ConsultReply, ...errorResponses } },
  'POST /api/consult/sessions/:id/messages/stream': { params: uuidParams('id'), body: ConsultMessageRequest, response: { 200: { contentType: 'text/event-stream', description: CONSULT_STREAM_DESCRIPTION }, ...errorResponses } },
  'GET /api/consult/sessions/:id/dossier': { params: uuidParams('id'), querystring: DossierQuery },
  'GET /api/consult/sessions/:id/attachments/:attachmentId': { params: uuidParams('id', 'attachmentId') },
  'GET /api/conversations': { querystring: ConversationListQuery, response: { 200: ConversationList, ...errorResponses } },
  'GET /api/conversations/:id': { params: uuidParams('id'), response: { 200: ConversationDetail, ...errorResponses } },

  'GET /api/iit/projects': { response: { 200: TrialProjectList, ...errorResponses } },
  'POST /api/iit/projects/:projectId/imports': { params: projectParams, querystring: ImportQuery, body: ImportRequest, response: { 200: ImportPreview, 201: ImportSummary, ...errorResponses } },
  'POST /api/iit/projects/:projectId/redcap-sync': { params: projectParams, response: { 201: ImportSummary, ...errorResponses } },
  'GET /api/iit/projects/:projectId/redcap': { params: projectParams, response: { 200: RedcapSettings, ...errorResponses } },
  'PUT /api/iit/projects/:projectId/redcap': { params: projectParams, body: SetRedcapRequest, response: { 200: RedcapSettings, ...errorResponses } },
  'GET /api/iit/projects/:projectId/records': { params: projectParams, querystring: RecordsQuery, response: { 200: RecordList, ...errorResponses } },
  'GET /api/iit/projects/:projectId/records/:recordId': { params: textParams('projectId', 'recordId'), response: { 200: TrialRecordView, ...errorResponses } },
  'GET /api/iit/projects/:projectId/audit': { params: projectParams, querystring: AuditFilter, response: { 200: AuditEntryList, ...errorResponses } },
  'GET /api/iit/projects/:projectId/audit/verify': { params: projectParams, response: { 200: AuditVerification, ...errorResponses } },

  'GET /api/iit/skills': { response: { 200: QcSkillList, ...errorResponses } },
  'POST /api/iit/skills': { body: SaveSkillRequest, response: { 201: SavedSkillDraft, ...errorResponses } },
  'POST /api/iit/skills/validate': { body: ValidateSkillRequest, response: { 200: SkillValidation, ...errorResponses } },
  'GET /api/iit/skills/:skillId': { params: textParams('skillId'), response: { 200: SkillDetail, ...errorResponses } },
  'GET /api/iit/skills/:skillId/versions': { params: textParams('skillId'), response: { 200: SkillVersionList, ...errorResponses } },
  'GET /api/iit/skills/:skillId/versions/:version': { params: textParams('skillId', 'version'), response: { 200: SkillVersionView, ...errorResponses } },
  'PUT /api/iit/skills/:skillId/draft': { params: textParams('skillId'), body: SaveSkillRequest, response: { 200: SavedSkillDraft, ...errorResponses } },
  'POST /api/iit/skills/:skillId/activate': { params: textParams('skillId'), body: ActivateSkillRequest, response: { 200: ActivateSkillResult, ...errorResponses, 422: ApiErrorBody } },
  'POST /api/iit/projects/:projectId/qc-runs': { params: projectParams, body: StartQcRunRequest, response: { 202: QcRunProgress, ...errorResponses } },
  'GET /api/iit/projects/:projectId/qc-runs': { params: projectParams, response: { 200: QcRunList, ...errorResponses } },
  'GET /api/iit/qc-runs/:id': { params: uuidParams('id'), response: { 200: QcRunProgress, ...errorResponses } },
  'GET /api/iit/projects/:projectId/task-runs': { params: projectParams, querystring: TaskRunFilter, response: { 200: TaskRunList, ...errorResponses } },
  'GET /api/iit/task-runs/:id': { params: uuidParams('id'), response: { 200: TaskRun, ...errorResponses } },
  'POST /api/iit/projects/:projectId/skills/dry-run': { params: projectParams, body: SkillDryRunRequest, response: { 200: SkillDryRunResult, ...errorResponses, 422: ApiErrorBody } },
  'POST /api/iit/projects/:projectId/skills/import-redcap-rules': { params: projectParams, body: ImportRedcapRulesRequest, response: { 200: ImportRedcapRulesResult, ...errorResponses, 422: ApiErrorBody } },
  'POST /api/iit/projects/:projectId/skills/impact': { params: projectParams, body: SkillImpactRequest, response: { 200: SkillImpact, ...errorResponses, 422: ApiErrorBody } },
  'POST /api/iit/task-runs/:id/review': { params: uuidParams('id'), body: ReviewTaskRunRequest, response: { 200: TaskRun, ...errorResponses } },
  'POST /api/iit/projects/:projectId/reviews': { params: projectParams, body: ReviewDecisionsRequest, response: { 200: ReviewDecisionsResponse, ...errorResponses } },

  'GET /api/iit/projects/:projectId/queries': { params: projectParams, querystring: DataQueryListQuery, response: { 200: DataQueryPage, ...errorResponses } },
  'POST /api/iit/projects/:projectId/queries/bulk-close': { params: projectParams, body: BulkCloseQueriesRequest, response: { 200: BulkCloseQueriesResponse, ...errorResponses } },
  'POST /api/iit/projects/:projectId/queries/:id/transition': { params: TransitionQueryParams, body: TransitionQueryRequest, response: { 200: DataQuery, ...errorResponses } },
  'POST /api/iit/projects/:projectId/chat': { params: projectParams, body: ChatRequest, response: { 200: ChatAnswer, ...errorResponses } },
  'POST /api/iit/projects/:projectId/chat/stream': { params: projectParams, body: ChatRequest, response: { 200: { contentType: 'text/event-stream', description: CHAT_STREAM_DESCRIPTION }, ...errorResponses } },
  'GET /api/iit/projects/:projectId/memory': { params: projectParams, response: { 200: HotMemory, ...errorResponses } },
  'PUT /api/iit/projects/:projectId/memory': { params: projectParams, body: ReplaceMemoryRequest, response: { 200: MemoryWriteResult, ...errorResponses } },
  'POST /api/iit/projects/:projectId/memory/facts': { params: projectParams, body: AddFactsRequest, response: { 200: MemoryWriteResult, ...errorResponses } },
  'GET /api/iit/projects/:projectId/memory/versions': { params: projectParams, response: { 200: HotMemoryVersionList, ...errorResponses } },
  'POST /api/iit/projects/:projectId/memory/rollback': { params: projectParams, body: RollbackMemoryRequest, response: { 200: MemoryWriteResult, ...errorResponses } },
  'GET /api/iit/projects/:projectId/reports': { params: projectParams, querystring: MemoryReportQuery, response: { 200: MemoryReportList, ...errorResponses } },
  'POST /api/iit/projects/:projectId/reports/regenerate': { params: projectParams, body: RegenerateReportRequest, response: { 200: RegenerateReportResult, ...errorResponses } },
  'GET /api/iit/projects/:projectId/feedback': { params: projectParams, response: { 200: FeedbackList, ...errorResponses } },
  'POST /api/iit/projects/:projectId/feedback': { params: projectParams, body: FeedbackRequest, response: { 200: Feedback, ...errorResponses } },
  'GET /api/profile': { response: { 200: UserProfile, ...errorResponses } },
  'PUT /api/profile': { body: UpdateProfileRequest, response: { 200: UserProfile, ...errorResponses } },
  'GET /api/users/:id/profile': { params: uuidParams('id'), response: { 200: UserProfile, ...errorResponses } },
  'PUT /api/users/:id/profile': { params: uuidParams('id'), body: UpdateProfileRequest, response: { 200: UserProfile, ...errorResponses } },

  'GET /api/iit/projects/:projectId/protocol-documents': { params: projectParams, response: { 200: ProtocolDocumentList, ...protocolErrorResponses } },
  'GET /api/iit/projects/:projectId/protocol-documents/search-index': { params: projectParams, response: { 200: SearchIndexStatus, ...protocolErrorResponses } },
  'POST /api/iit/projects/:projectId/protocol-documents': { params: projectParams, body: IngestProtocolDocumentRequest, response: { 201: IngestProtocolDocumentResponse, ...protocolErrorResponses } },
  'DELETE /api/iit/projects/:projectId/protocol-documents/:documentId': { params: ProtocolDocumentParams, response: { 204: NoContent, ...protocolErrorResponses } },

  // No response schema: the same route answers JSON (ViolationsReport), CSV or XLSX.
  'GET /api/iit/projects/:projectId/report': { params: projectParams, querystring: ReportQuery },
  'GET /api/iit/projects/:projectId/rule-yield': { params: projectParams, querystring: RuleYieldQuery, response: { 200: RuleYieldList, ...errorResponses } },
} satisfies Record<string, RouteContract>;

export type RouteKey = keyof typeof routes;

/** The Fastify form of a route contract: what goes into a route's `schema` beside its tags and summary. */
interface FastifyRouteSchema {
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  response?: Record<string, JsonSchema>;
}

/** Requests are described as clients send them, responses as the server answers. */
export function fastifySchema(route: RouteContract): FastifyRouteSchema {
  const schema: FastifyRouteSchema = {};
  if (route.params) schema.params = jsonSchema(route.params, 'input');
  if (route.querystring) schema.querystring = jsonSchema(route.querystring, 'input');
  if (route.body) schema.body = jsonSchema(route.body, 'input');
  if (route.response) {
    schema.response = {};
    for (const [status, response] of Object.entries(route.response)) {
      if (!response) continue;
      schema.response[status] = isStream(response)
        ? { description: response.description, content: { [response.contentType]: { schema: { type: 'string' } } } }
        : jsonSchema(response, 'output');
    }
  }
  return schema;
}

function isStream(response: z.ZodType | StreamResponse): response is StreamResponse {
  return 'contentType' in response;
}

/** `schema: { tags, summary, ...routeSchema('POST /api/agent/run') }` in a route file. A new object per call: Fastify may annotate what it is given. */
export function routeSchema(key: RouteKey): FastifyRouteSchema {
  return fastifySchema(routes[key]);
}

