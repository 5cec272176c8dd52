import type {
  AddFactsRequest,
  ChatAnswer,
  ChatRequest,
  Feedback,
  FeedbackRequest,
  HotMemory,
  HotMemoryVersion,
  MemoryReport,
  MemoryWriteResult,
  RegenerateReportResult,
  ReplaceMemoryRequest,
  UpdateProfileRequest,
  UserProfile,
} from '../../../src/contract/index.js';
import type { EventStreamOptions, PostEventStream } from './event-stream';
import type { HttpClient } from './http-client';
import { queryString } from './trial-api';

/**
 * Shapes of the trial assistant's routes (chat, hot memory, weekly reports, feedback, profiles) from the API
 * contract (src/contract/assistant.ts); imported for types only.
 */
export type {
  ChatAnswer,
  ChatPart,
  ChatRequest,
  Feedback,
  HotMemory,
  HotMemoryLine,
  HotMemorySection,
  HotMemoryVersion,
  Intent,
  IntentType,
  MemoryReport,
  MemoryWriteResult,
  RegenerateReportResult,
  UpdateProfileRequest,
  UserProfile,
} from '../../../src/contract/index.js';

const segment = encodeURIComponent;

/** One typed function per trial assistant route; the chat also as server-sent events. */
export function createAssistantApi(http: HttpClient, postEventStream: PostEventStream) {
  const project = (projectId: string) => `/api/iit/projects/${segment(projectId)}`;
  return {
    chat: (projectId: string, request: ChatRequest) => http.post<ChatAnswer>(`${project(projectId)}/chat`, request),
    /** POST .../chat/stream: resolves to the same ChatAnswer as `chat`; rejects with an AbortError when stopped. */
    streamChat: (projectId: string, request: ChatRequest, options: EventStreamOptions) => postEventStream<ChatAnswer>(`${project(projectId)}/chat/stream`, request, options),

    getMemory: (projectId: string) => http.get<HotMemory>(`${project(projectId)}/memory`),
    replaceMemory: (projectId: string, request: ReplaceMemoryRequest) => http.put<MemoryWriteResult>(`${project(projectId)}/memory`, request),
    addFacts: (projectId: string, request: AddFactsRequest) => http.post<MemoryWriteResult>(`${project(projectId)}/memory/facts`, request),
    listMemoryVersions: async (projectId: string) =>
      (await http.get<{ versions: HotMemoryVersion[] }>(`${project(projectId)}/memory/versions`)).versions,
    rollbackMemory: (projectId: string, version: number, reason?: string) =>
      http.post<MemoryWriteResult>(`${project(projectId)}/memory/rollback`, reason ? { version, reason } : { version }),

    listReports: async (projectId: string, filter: { kind?: 'week' | 'year'; limit?: number } = {}) =>
      (await http.get<{ reports: MemoryReport[] }>(`${project(projectId)}/reports${queryString({ kind: filter.kind, limit: filter.limit?.toString() })}`)).reports,
    regenerateReport: (projectId: string, weekStart: string) => http.post<RegenerateReportResult>(`${project(projectId)}/reports/regenerate`, { weekStart }),

    listFeedback: async (projectId: string) => (await http.get<{ feedback: Feedback[] }>(`${project(projectId)}/feedback`)).feedback,
    sendFeedback: (projectId: string, request: FeedbackRequest) => http.post<Feedback>(`${project(projectId)}/feedback`, request),

    getProfile: () => http.get<UserProfile>('/api/profile'),
    updateProfile: (request: UpdateProfileRequest) => http.put<UserProfile>('/api/profile', request),
  };
}

export type AssistantApi = ReturnType<typeof createAssistantApi>;
