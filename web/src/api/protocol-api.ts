import type {
  ActionCallbackResponse,
  ProtocolChatRequest,
  ProtocolChatResponse,
  ProtocolContextResponse,
  ProtocolList,
  StageCompleteResponse,
  StartProtocolResponse,
} from '../../../src/contract/protocol-agent.js';
import type { SampleSizeRequest, SampleSizeResponse } from '../../../src/contract/tools.js';
import type { EventStreamOptions, PostEventStream } from './event-stream';
import type { HttpClient } from './http-client';
import type { DownloadedFile } from './trial-types';

/**
 * Shapes of the Protocol Agent's routes (src/contract/protocol-agent.ts) and of the sample-size calculator
 * (src/contract/tools.ts); imported for types only.
 */
export type {
  ActionCallbackResponse,
  ActionCardPayload,
  ProtocolChatResponse,
  ProtocolContextResponse,
  ProtocolList,
  SpiritCoverage,
  StageCompleteResponse,
  StageProgress,
  StartProtocolResponse,
} from '../../../src/contract/protocol-agent.js';
export type { SampleSizeRequest, SampleSizeResponse } from '../../../src/contract/tools.js';
export type ProtocolSummary = ProtocolList['protocols'][number];
export type ProtocolExportFormat = 'md' | 'docx';

const base = '/api/aia/protocol-agent';
const segment = encodeURIComponent;

/** One typed function per Protocol Agent route; the chat also as server-sent events. */
export function createProtocolApi(http: HttpClient, postEventStream: PostEventStream) {
  return {
    start: (request: { title?: string; projectId?: string } = {}) => http.post<StartProtocolResponse>(`${base}/conversations`, request),
    list: async () => (await http.get<ProtocolList>(`${base}/conversations`)).protocols,
    chat: (request: ProtocolChatRequest) => http.post<ProtocolChatResponse>(`${base}/chat`, request),
    /** POST .../chat/stream: resolves to the same ProtocolChatResponse as `chat`; rejects with an AbortError when stopped. */
    streamChat: (request: ProtocolChatRequest, options: EventStreamOptions) => postEventStream<ProtocolChatResponse>(`${base}/chat/stream`, request, options),
    completeStage: (conversationId: string) => http.post<StageCompleteResponse>(`${base}/stage/complete`, { conversationId }),
    getContext: (conversationId: string) => http.get<ProtocolContextResponse>(`${base}/context/${segment(conversationId)}`),
    /** Adds `value`'s keys to one context field; a 400 names an unknown field or key. */
    patchContext: (conversationId: string, field: string, value: Record<string, unknown>) =>
      http.patch<ProtocolContextResponse>(`${base}/context/${segment(conversationId)}`, { field, value }),
    actionCallback: (conversationId: string, cardId: string, result: Record<string, unknown>) =>
      http.post<ActionCallbackResponse>(`${base}/action-callback`, { conversationId, cardId, result }),
    exportFile: (conversationId: string, format: ProtocolExportFormat): Promise<DownloadedFile> =>
      http.getFile(`${base}/export/${segment(conversationId)}?format=${format}`),
    /** POST /api/tools/sample-size: a pure computation; a 400 names the bad field. */
    sampleSize: (request: SampleSizeRequest) => http.post<SampleSizeResponse>('/api/tools/sample-size', request),
  };
}

export type ProtocolApi = ReturnType<typeof createProtocolApi>;
