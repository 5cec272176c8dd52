import type { HttpClient } from './http-client';
import { createAccountApi } from './account-api';
import { createAssistantApi } from './assistant-api';
import type { PostEventStream } from './event-stream';
import { createConversationsApi } from './conversations-api';
import { createMembersApi } from './members-api';
import { createRuleYieldApi } from './rule-yield-api';
import { createSkillsApi } from './skills-api';
import { createTrialApi } from './trial-api';
import type {
  AgentResult,
  AgentRunRequest,
  AgentSummary,
  Health,
  LoginResponse,
  Me,
  OpenApiDocument,
  InvalidScenario,
  Scenario,
  Trace,
} from './types';

/** One typed function per server route the console uses. */
export function createClinAgentApi(http: HttpClient, postEventStream: PostEventStream) {
  return {
    health: () => http.get<Health>('/api/health'),
    login: (code: string) => http.post<LoginResponse>('/api/auth/login', { code }),
    me: () => http.get<Me>('/api/me'),
    listAgents: async () => (await http.get<{ agents: AgentSummary[] }>('/api/agents')).agents,
    listScenarios: () => http.get<{ scenarios: Scenario[]; invalid: InvalidScenario[] }>('/api/scenarios'),
    runAgent: (request: AgentRunRequest) => http.post<AgentResult>('/api/agent/run', request),
    getTrace: (traceId: string) => http.get<Trace>(`/api/traces/${encodeURIComponent(traceId)}`),
    openApi: () => http.get<OpenApiDocument>('/api/openapi.json'),
    trial: createTrialApi(http),
    account: createAccountApi(http),
    members: createMembersApi(http),
    ruleYield: createRuleYieldApi(http),
    skills: createSkillsApi(http),
    conversations: createConversationsApi(http),
    assistant: createAssistantApi(http, postEventStream),
  };
}

export type ClinAgentApi = ReturnType<typeof createClinAgentApi>;
