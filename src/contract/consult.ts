import { z } from 'zod';
import { OpenObject, Uuid } from './common.js';
import { runStreamDescription } from './run-events.js';

/**
 * The dermatology consult (seed 003): a ReAct consult that decides each step itself, with deterministic safety
 * checks above the model. A consult is its owner's: anyone else gets 404.
 */

export const RiskLevel = z.enum(['low', 'moderate', 'high', 'urgent']);
export type RiskLevel = z.infer<typeof RiskLevel>;
const RedFlag = z.object({ id: z.string(), description: z.string() });

/** POST /api/consult/sessions */
export const StartConsultRequest = z.strictObject({ title: z.string().min(1).max(200).optional() });
export type StartConsultRequest = z.infer<typeof StartConsultRequest>;
export const StartConsultResponse = z.object({ sessionId: z.string() });

/** An image sent as JSON: base64 (a data: URL or bare), checked by its bytes (JPEG, PNG or WebP). */
const ConsultImage = z.strictObject({
  data: z.string().min(1).max(14_000_000).describe('base64 of the image, or a data: URL'),
  name: z.string().max(200).optional(),
});

/** A multipart upload as the server reads it (`image` file part). */
const UploadedImage = z.looseObject({ filename: z.string(), data: z.unknown() }).describe('multipart only: the image file');

/**
 * The client's own id of one message, so a message resent after a failure (a 503, a dropped connection) is taken
 * once: a resend gets the first attempt's reply, or the reply to the message already stored.
 */
export const ClientMessageId = Uuid.describe('a UUID the client makes per message and sends again when it resends that message after a failure: the consult takes it once and answers every resend with its reply');

/** POST /api/consult/sessions/:id/messages (JSON; or multipart with `message` and `clientMessageId` fields and an `image` file) */
export const ConsultMessageRequest = z.strictObject({
  message: z.string().min(1).max(10_000),
  image: z.union([ConsultImage, UploadedImage]).optional(),
  clientMessageId: ClientMessageId.optional(),
});
export type ConsultMessageRequest = z.infer<typeof ConsultMessageRequest>;

export const ConsultReply = z.object({
  response: z.string().describe("what the consult says; at urgent, high and moderate risk it leads with that level's advice from the risk table (src/agents/consult/risk/level-guidance.ts), marked ⚠️, in the patient's language, whatever the model wrote; at low risk the model's answer leads"),
  quickOptions: z.array(z.string()).describe('answers the patient can tap'),
  action: z.enum(['respond', 'diagnose', 'stopped']).describe('respond: it asks or answers and waits; diagnose: it concluded; stopped: a limit was reached'),
  medicalContext: OpenObject,
  riskLevel: RiskLevel,
  redFlags: z.array(RedFlag),
  traceId: z.string(),
});
export type ConsultReply = z.infer<typeof ConsultReply>;
export const CONSULT_STREAM_DESCRIPTION = runStreamDescription('the reply POST /api/consult/sessions/:id/messages returns');

const ConsultTurn = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  quickOptions: z.array(z.string()).optional(),
  attachmentId: z.string().optional(),
  /** The client's id of a user message that came with one. */
  clientMessageId: z.string().optional(),
  at: z.string(),
});

/** GET /api/consult/sessions/:id */
export const ConsultSession = z.object({
  sessionId: z.string(),
  title: z.string(),
  status: z.enum(['open', 'diagnosed']),
  medicalContext: OpenObject,
  riskLevel: RiskLevel,
  redFlags: z.array(RedFlag),
  quickOptions: z.array(z.string()),
  turns: z.array(ConsultTurn),
  attachments: z.array(z.object({ id: z.string(), mimeType: z.string(), sizeBytes: z.int(), createdAt: z.string() })),
  tokensUsed: z.int(),
  tokenBudget: z.int(),
  dossier: z.object({ dossierId: z.string(), createdAt: z.string() }).nullable(),
  updatedAt: z.string(),
});
export type ConsultSession = z.infer<typeof ConsultSession>;

/** GET /api/consult/sessions */
const ConsultSummary = z.object({ sessionId: z.string(), title: z.string(), status: z.enum(['open', 'diagnosed']), riskLevel: RiskLevel, updatedAt: z.string() });
export const ConsultList = z.object({ sessions: z.array(ConsultSummary) });
export type ConsultList = z.infer<typeof ConsultList>;
export const DossierQuery = z.strictObject({ format: z.enum(['json', 'md', 'docx']).default('json') });
