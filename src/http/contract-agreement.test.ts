import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as contract from '../contract/index.js';
import { fastifySchema, routes, type RouteKey } from '../contract/index.js';
import type { AgentResult as ServerAgentResult } from '../runtime/result.js';
import type { TokenInfo } from '../core/auth/token-issuer.js';
import type { User as ServerUser, UserSummary } from '../core/auth/users.js';
import type { IdentifierAccess } from '../core/auth/identifier-access.js';
import type { ProjectMember as ServerProjectMember } from '../core/auth/project-members.js';
import type { AuditEntityType as ServerAuditEntityType } from '../core/db/schema/audit.js';
import { ROLES } from '../core/db/schema/auth.js';
import type { TaskRunStatus as ServerTaskRunStatus } from '../core/db/schema/trial.js';
import type { QueryStatus as ServerQueryStatus } from '../trial/queries.js';
import { UUID_PATTERN } from '../core/ids.js';
import type { TraceStore } from '../core/trace/store.js';
import type { DocumentInfo, IngestResult } from '../rag/types.js';
import { startScriptedModel, type ScriptedModel } from '../testing/scripted-model.js';
import { buildTestContext } from '../testing/test-context.js';
import { waitFor } from '../testing/wait-for.js';
import { ensureDemoTrial } from '../trial/demo/load-demo-trial.js';
import { createTrialStore } from '../trial/store/trial-store.js';
import type { TrialServices } from '../trial/trial-services.js';
import type { SkillService } from '../trial/skills/skill-service.js';
import type { TrialAssistant } from '../chat/index.js';
import type { StagedAgentService } from '../runtime/staged/staged-agent-service.js';
import type { protocolContextResponse } from '../agents/protocol/protocol-agent.js';
import type { StoredConfig } from '../runtime/staged/config-store.js';
import type { ConsultService } from '../agents/consult/consult-service.js';
import type { IntentType as ServerIntentType } from '../chat/index.js';
import type { ProjectMemory } from '../memory/index.js';
import { registerWorkers } from '../workers.js';
import { buildServer } from './server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

/**
 * Routes whose schemas are still written inline in their route file. Moving one into src/contract/routes.ts
 * (and its route file onto `...routeSchema(key)`) takes it off this list; a route neither here nor in the
 * contract fails the first test.
 */
const NOT_YET_IN_CONTRACT = new Set<string>([]);
/** The OpenAPI document describes the others; it has no shapes of its own. */
const NOT_AN_API_SHAPE = new Set(['GET /api/openapi.json']);

/** The parts of a route schema the contract owns; tags and summaries stay with the route. */
function shapesOf(schema: Record<string, unknown> | undefined) {
  const { params, querystring, body, response } = schema ?? {};
  return JSON.parse(JSON.stringify({ params, querystring, body, response })) as unknown;
}

describe('the API contract and the server', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let workers: { stop(): void };
  let admin: { authorization: string };

  beforeAll(async () => {
    model = await startScriptedModel();
    // pglite: the agent run below retrieves from pgvector.
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite', startJobs: true });
    app = await buildServer(ctx, { serveConsole: false });
    workers = await registerWorkers(ctx);
    const { token } = await ctx.users.create({ name: 'contract-admin', role: 'admin' });
    admin = { authorization: `Bearer ${token}` };
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  it('registers every route with exactly the JSON schemas the contract makes, and the contract has no route the server lacks', () => {
    const registered = new Map(app.routeTable.map((route) => [`${route.method} ${route.url}`, route]));
    const missing = [...registered.keys()].filter((key) => !(key in routes) && !NOT_YET_IN_CONTRACT.has(key) && !NOT_AN_API_SHAPE.has(key));
    expect(missing, 'routes without a contract: describe them in src/contract/routes.ts and use ...routeSchema(key)').toEqual([]);
    expect(Object.keys(routes).filter((key) => !registered.has(key)), 'contract routes the server does not register').toEqual([]);
    for (const key of Object.keys(routes) as RouteKey[]) {
      if (NOT_YET_IN_CONTRACT.has(key)) continue;
      expect(shapesOf(registered.get(key)?.schema as Record<string, unknown>), key).toEqual(shapesOf(fastifySchema(routes[key]) as Record<string, unknown>));
    }
  });

  it('publishes the contract in the OpenAPI document, descriptions included', async () => {
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json', headers: admin })).json();
    const run = document.paths['/api/agent/run'].post;
    const result = run.responses['200'].content['application/json'].schema;
    expect(result.properties.traceId.description).toContain('GET /api/traces/:id');
    expect(result.required).toContain('structuredOutput');
    const taskRun = document.paths['/api/iit/task-runs/{id}'].get.responses['200'].content['application/json'].schema;
    expect(taskRun.properties.reviewRequest.description).toContain('why the run waits for a person');
    // Open objects stay open, so the serializer keeps fields the contract does not list.
    const records = document.paths['/api/iit/projects/{projectId}/records'].get.responses['200'].content['application/json'].schema;
    expect(records.properties.records.items.additionalProperties).toBe(true);
  });

  it('keeps the constants the contract copies (it imports nothing of the server) equal to the server’s', () => {
    expect(contract.UUID_PATTERN).toBe(UUID_PATTERN);
    expect(contract.ROLES).toEqual(ROLES);
  });

  it('answers the agent run, QC progress, task runs, reviews and queries in the shapes the contract declares', async () => {
    const parse = <K extends RouteKey>(key: K, status: number, response: { statusCode: number; body: string }) => {
      expect(response.statusCode, `${key}: ${response.body}`).toBe(status);
      const schema = (routes[key] as { response?: Record<number, z.ZodType> }).response?.[status];
      if (!schema) throw new Error(`${key} declares no ${status} response`);
      const parsed = schema.safeParse(JSON.parse(response.body));
      expect(parsed.success ? 'matches' : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`), key).toBe('matches');
      return parsed.data as Record<string, unknown>;
    };
    const get = (url: string) => app.inject({ method: 'GET', url, headers: admin });
    const post = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: admin, payload });

    parse('GET /api/health', 200, await get('/api/health'));
    parse('GET /api/me', 200, await get('/api/me'));
    parse('GET /api/scenarios', 200, await get('/api/scenarios'));

    model.push({ reply: '{"answer": "Adults aged 18 to 75 [1].", "citations": ["[1]"], "confidence": "high"}' });
    const result = parse('POST /api/agent/run', 200, await post('/api/agent/run', { scenarioId: 'protocol-qa', input: 'Who can enrol?' }));
    parse('GET /api/traces/:id', 200, await get(`/api/traces/${result.traceId}`));
    parse('GET /api/traces', 200, await get('/api/traces'));

    // Three records with planted errors (their runs wait for review) and one without.
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    const project = '/api/iit/projects/demo-htn-01';
    const started = parse('POST /api/iit/projects/:projectId/qc-runs', 202, await post(`${project}/qc-runs`, { skillId: 'demo-core-checks', recordIds: ['S027', 'S037', 'S085', 'S001'] }));
    const progress = await waitFor(async () => {
      const current = parse('GET /api/iit/qc-runs/:id', 200, await get(`/api/iit/qc-runs/${started.id}`));
      return current.status !== 'running' && current;
    }, 'the QC run to leave running', 60_000, 200);
    expect(progress).toMatchObject({ status: 'waiting_review', suspended: 3 });
    parse('GET /api/iit/projects/:projectId/qc-runs', 200, await get(`${project}/qc-runs`));
    parse('GET /api/iit/skills', 200, await get('/api/iit/skills'));

    const { taskRuns } = parse('GET /api/iit/projects/:projectId/task-runs', 200, await get(`${project}/task-runs?status=SUSPENDED`)) as { taskRuns: contract.TaskRun[] };
    const suspended = taskRuns[0]!;
    expect(parse('GET /api/iit/task-runs/:id', 200, await get(`/api/iit/task-runs/${suspended.id}`))).toMatchObject({ status: 'SUSPENDED', reviewDescription: expect.any(String) });
    parse('POST /api/iit/task-runs/:id/review', 200, await post(`/api/iit/task-runs/${suspended.id}/review`, { decision: 'approve', comment: 'checked with the site' }));

    const { queries } = parse('GET /api/iit/projects/:projectId/queries', 200, await get(`${project}/queries`)) as { queries: contract.DataQuery[] };
    expect(queries.length).toBeGreaterThan(0);
    const open = queries.find((query) => query.allowedTransitions.includes('answered'))!;
    parse('POST /api/iit/projects/:projectId/queries/:id/transition', 200, await post(`${project}/queries/${open.id}/transition`, { to: 'answered', comment: 'corrected in the CRF' }));

    const view = parse('GET /api/iit/projects/:projectId/records/:recordId', 200, await get(`${project}/records/S037`)) as contract.TrialRecordView;
    expect(view.queries.length).toBeGreaterThan(0);
    parse('GET /api/iit/projects/:projectId/records', 200, await get(`${project}/records?limit=5`));
    parse('GET /api/iit/projects/:projectId/audit', 200, await get(`${project}/audit`));
    parse('GET /api/iit/projects/:projectId/audit/verify', 200, await get(`${project}/audit/verify`));
    parse('GET /api/iit/projects', 200, await get('/api/iit/projects'));
    // The report has no response schema (it is also CSV or XLSX); its JSON form still follows the contract.
    expect(contract.ViolationsReport.safeParse((await get(`${project}/report`)).json()).success).toBe(true);
  }, 120_000);

  it('answers errors as {code, message, details}', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: admin, payload: { scenarioId: 'protocol-qa' } });
    expect(response.statusCode).toBe(400);
    expect(contract.ApiErrorBody.parse(response.json()).message).toContain('body.input: is required');
  });
});

/*
 * What the library returns, once sent as JSON (a Date becomes its ISO string), must fit what the contract
 * says the route answers. Checked by `npm run typecheck`: a mismatch is a compile error on the line naming
 * the two types.
 */
type Jsonified<T> = T extends Date ? string : T extends ReadonlyArray<infer U> ? Jsonified<U>[] : T extends object ? { [K in keyof T]: Jsonified<T[K]> } : T;
type Returned<F extends (...args: never[]) => unknown> = Jsonified<Awaited<ReturnType<F>>>;
function fits<Server, Contract>(verdict: [Server] extends [Contract] ? 'fits' : 'does not fit'): void {
  void verdict;
}
function sameUnion<A, B>(verdict: [A] extends [B] ? ([B] extends [A] ? 'same' : 'differs') : 'differs'): void {
  void verdict;
}

fits<Jsonified<ServerAgentResult>, contract.AgentResult>('fits');
fits<Jsonified<ServerUser>, contract.User>('fits');
fits<Jsonified<UserSummary>, contract.ManagedUser>('fits');
fits<Jsonified<TokenInfo>, contract.AccountToken>('fits');
fits<Jsonified<IdentifierAccess>, Pick<contract.MemberAccess, 'projectId' | 'userId' | 'canViewIdentifiers'>>('fits');
fits<Jsonified<ServerProjectMember>, contract.ProjectMember>('fits');
fits<Jsonified<DocumentInfo>, contract.DocumentInfo>('fits');
fits<Jsonified<IngestResult>, contract.IngestDocumentResponse>('fits');
fits<Returned<TraceStore['get']>, contract.Trace | undefined>('fits');
fits<Returned<TraceStore['list']>, contract.TraceSummary[]>('fits');
fits<Returned<TrialServices['records']['projects']>, contract.TrialProject[]>('fits');
fits<Returned<TrialServices['imports']['importCsv']>, contract.ImportSummary>('fits');
fits<Returned<TrialServices['redcap']['sync']>, contract.ImportSummary>('fits');
fits<Returned<TrialServices['redcap']['settings']>, contract.RedcapSettings>('fits');
fits<Returned<TrialServices['redcap']['configure']>, contract.RedcapSettings>('fits');
fits<Returned<TrialServices['records']['records']>, contract.RecordEvent[]>('fits');
fits<Returned<TrialServices['records']['audit']>, contract.AuditEntry[]>('fits');
fits<Returned<TrialServices['records']['verifyAudit']>, contract.AuditVerification>('fits');
fits<Returned<TrialServices['skills']['active']>, contract.QcSkill[]>('fits');
fits<Returned<TrialServices['skills']['list']>, contract.QcSkill[]>('fits');
fits<Jsonified<Returned<SkillService['get']>>, contract.SkillDetail>('fits');
fits<Jsonified<Returned<SkillService['versions']>>, contract.SkillVersionSummary[]>('fits');
fits<Jsonified<Returned<SkillService['version']>>, contract.SkillVersionView>('fits');
fits<Jsonified<Returned<SkillService['create']>>, contract.SavedSkillDraft>('fits');
fits<Jsonified<Returned<SkillService['saveDraft']>>, contract.SavedSkillDraft>('fits');
fits<Jsonified<Returned<SkillService['validate']>>, contract.SkillValidation>('fits');
fits<Jsonified<Returned<SkillService['activate']>>, contract.ActivateSkillResult>('fits');
fits<Returned<TrialServices['qc']['startQcRun']>, contract.QcRunProgress>('fits');
fits<Returned<TrialServices['qc']['qcRun']>, contract.QcRunProgress>('fits');
fits<Returned<TrialServices['qc']['qcRuns']>, contract.QcRunProgress[]>('fits');
fits<Returned<TrialServices['reports']['violations']>, contract.ViolationsReport>('fits');
// Stored steps are typed as open records and allowed transitions as any status; the contract names what
// the SOP engine and the query lifecycle (trial/queries.ts TRANSITIONS) actually write.
fits<Omit<Returned<TrialServices['qc']['taskRun']>, 'steps'>, Omit<contract.TaskRun, 'steps'>>('fits');
fits<Omit<Returned<TrialServices['qc']['review']>, 'steps'>, Omit<contract.TaskRun, 'steps'>>('fits');
fits<Omit<Returned<TrialServices['queries']['page']>['queries'][number], 'allowedTransitions'>, Omit<contract.DataQuery, 'allowedTransitions'>>('fits');
fits<Omit<Returned<TrialServices['queries']['page']>, 'queries'>, Omit<contract.DataQueryPage, 'queries'>>('fits');
fits<Returned<TrialServices['queries']['bulkClose']>, contract.BulkCloseQueriesResponse>('fits');
fits<Omit<Returned<TrialServices['queries']['transition']>, 'allowedTransitions'>, Omit<contract.DataQuery, 'allowedTransitions'>>('fits');
fits<Returned<TrialAssistant['chat']>, contract.ChatAnswer>('fits');
fits<Returned<StagedAgentService['message']>, contract.ProtocolChatResponse>('fits');
fits<Returned<StagedAgentService['completeStage']>, contract.StageCompleteResponse>('fits');
fits<Jsonified<ReturnType<typeof protocolContextResponse>>, contract.ProtocolContextResponse>('fits');
fits<Omit<Jsonified<StoredConfig>, 'config'>, Omit<contract.AgentConfigView, 'config'>>('fits');
fits<Returned<ConsultService['message']>, contract.ConsultReply>('fits');
fits<Returned<ConsultService['start']>, z.infer<typeof contract.StartConsultResponse>>('fits');
fits<Returned<ProjectMemory['hot']['get']>, contract.HotMemory>('fits');
fits<Returned<ProjectMemory['hot']['replace']>, contract.MemoryWriteResult>('fits');
fits<Returned<ProjectMemory['hot']['versions']>, contract.HotMemoryVersion[]>('fits');
fits<Returned<ProjectMemory['reports']['list']>, contract.MemoryReport[]>('fits');
fits<Returned<ProjectMemory['feedback']['record']>, contract.Feedback>('fits');
fits<Returned<ProjectMemory['profiles']['get']>, contract.UserProfile>('fits');
sameUnion<ServerAuditEntityType, contract.AuditEntityType>('same');
sameUnion<ServerIntentType, contract.IntentType>('same');
sameUnion<ServerQueryStatus, contract.QueryStatus>('same');
sameUnion<ServerTaskRunStatus, contract.TaskRunStatus>('same');
sameUnion<ServerAgentResult['status'], contract.AgentResult['status']>('same');
