import type { ConsultList, ConsultReply, ConsultSession, StartConsultRequest } from '../../../src/contract/consult.js';
import type { EventStreamOptions, PostEventStream } from './event-stream';
import type { HttpClient } from './http-client';
import type { DownloadedFile } from './trial-types';

/** Shapes of the dermatology consult's routes (src/contract/consult.ts); imported for types only. */
export type { ConsultList, ConsultReply, ConsultSession, RiskLevel } from '../../../src/contract/consult.js';
export type ConsultSummary = ConsultList['sessions'][number];
export type ConsultTurn = ConsultSession['turns'][number];
export type ConsultRedFlag = ConsultSession['redFlags'][number];
export type DossierFormat = 'json' | 'md' | 'docx';

/**
 * One message to the consult: its words, at most one photo of the skin, and the id the console made for it; a
 * retry of a failed send carries the same id, so the consult takes the message once however often it is sent.
 */
export interface ConsultMessage {
  message: string;
  image?: File;
  clientMessageId?: string;
}

/**
 * A new message's id: a random UUID (crypto.randomUUID exists only on https and localhost; a console opened over
 * plain http on a hospital network still has getRandomValues, from which the same version-4 UUID is made).
 */
export function newClientMessageId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const base = '/api/consult/sessions';
const segment = encodeURIComponent;

/**
 * A message with an image goes as multipart: the file travels as bytes (a base64 JSON body would be a third larger
 * and meet the JSON body limit before the consult's own size check could say what is accepted).
 */
export function consultMessageBody({ message, image, clientMessageId }: ConsultMessage): FormData | { message: string; clientMessageId?: string } {
  if (!image) return clientMessageId ? { message, clientMessageId } : { message };
  const form = new FormData();
  form.append('message', message);
  if (clientMessageId) form.append('clientMessageId', clientMessageId);
  form.append('image', image, image.name);
  return form;
}

/** One typed function per consult route; the message also as server-sent events. */
export function createConsultApi(http: HttpClient, postEventStream: PostEventStream) {
  return {
    start: (request: StartConsultRequest = {}) => http.post<{ sessionId: string }>(base, request),
    list: async () => (await http.get<ConsultList>(base)).sessions,
    get: (sessionId: string) => http.get<ConsultSession>(`${base}/${segment(sessionId)}`),
    /** POST .../messages/stream: resolves to the ConsultReply (the `result` event); rejects with an AbortError when stopped. */
    streamMessage: (sessionId: string, message: ConsultMessage, options: EventStreamOptions) =>
      postEventStream<ConsultReply>(`${base}/${segment(sessionId)}/messages/stream`, consultMessageBody(message), options),
    /** The consult record as data; the server makes it when the consult has none yet. */
    dossier: (sessionId: string) => http.get<Record<string, unknown>>(`${base}/${segment(sessionId)}/dossier?format=json`),
    dossierFile: (sessionId: string, format: Exclude<DossierFormat, 'json'>): Promise<DownloadedFile> => http.getFile(`${base}/${segment(sessionId)}/dossier?format=${format}`),
    /** An uploaded image's bytes (the route needs the bearer token, so an <img src> cannot load it directly). */
    attachment: (sessionId: string, attachmentId: string): Promise<DownloadedFile> => http.getFile(`${base}/${segment(sessionId)}/attachments/${segment(attachmentId)}`),
  };
}

export type ConsultApi = ReturnType<typeof createConsultApi>;
