import { z } from 'zod';
import { Uuid } from './common.js';

/** What a message asks for: the router (model, or rules when the model is unavailable) labels each part of it. */
export const IntentType = z.enum(['qc_task', 'data_question', 'history_question', 'memory_instruction', 'write_request', 'chit_chat', 'unclear']);
export type IntentType = z.infer<typeof IntentType>;

export const HotMemorySection = z.enum(['preferences', 'state', 'prohibitions']);
export type HotMemorySection = z.infer<typeof HotMemorySection>;

export const Intent = z.object({
  type: IntentType,
  text: z.string().describe('the part of the message this intent is about'),
  recordIds: z.array(z.string()).optional().describe('qc_task: the records named'),
  skillId: z.string().optional().describe('qc_task: the QC skill named'),
  fact: z.object({ section: HotMemorySection, text: z.string() }).optional().describe('memory_instruction: what to remember'),
});
export type Intent = z.infer<typeof Intent>;

/** POST /api/iit/projects/:projectId/chat */
export const ChatRequest = z.strictObject({
  message: z.string().trim().min(1, 'must not be empty: type a question').max(4000, 'must be at most 4000 characters; split a longer message').describe('the question or instruction, in Chinese or English'),
  conversationId: Uuid.optional().describe('continue this conversation (yours, of this project); absent: a new one'),
});
export type ChatRequest = z.input<typeof ChatRequest>;

/** How one intent of the message was handled, in the order the answer lists them. */
export const ChatPart = z.object({
  intent: Intent,
  answer: z.string(),
  ok: z.boolean().describe('false when a limit ended it, the user may not do it, or it was refused'),
  ending: z.enum(['answer', 'max_rounds', 'token_budget', 'error_breaker', 'guided', 'started', 'remembered', 'forbidden', 'failed']),
  qcRunId: z.string().optional().describe('qc_task: the QC run started (GET /api/iit/qc-runs/:id)'),
});
export type ChatPart = z.infer<typeof ChatPart>;

const RoutingFallback = z.enum(['model_unavailable', 'answer_unusable', 'empty_message']);

export const ChatAnswer = z.object({
  answer: z.string().describe('what the user reads: the final answer only, every intent in order'),
  intents: z.array(Intent),
  routedBy: z.enum(['model', 'rules']).describe('rules: keyword rules classified the message, because of routingFallback'),
  routingFallback: RoutingFallback.nullable().describe('why the rules classified it: the model failed, or answered in a shape that could not be used; null when the model did'),
  parts: z.array(ChatPart),
  conversationId: z.string(),
  turnSeq: z.int().describe("the assistant turn holding the answer: rate it with POST .../feedback"),
  traceId: z.string().describe('the full trace (thoughts, tool calls, observations): admins only'),
});
export type ChatAnswer = z.infer<typeof ChatAnswer>;

const MemoryLineSource = z.object({
  kind: z.enum(['turn', 'record', 'report', 'feedback', 'user']),
  ref: z.string().describe('turn: conversationId#seq; record: record id; report: report id; feedback: feedback id; user: user name'),
});

export const HotMemoryLine = z.object({
  section: HotMemorySection,
  text: z.string(),
  source: MemoryLineSource,
  addedBy: z.string(),
  addedAt: z.string(),
});
export type HotMemoryLine = z.infer<typeof HotMemoryLine>;

const MemoryWritePath = z.enum(['chat', 'api', 'editor', 'distillation', 'pruning', 'rollback']);

export const HotMemory = z.object({
  projectId: z.string(),
  version: z.int().describe('0 before the first write'),
  content: z.string().describe('markdown: ## Preferences, ## Current state, ## Prohibitions'),
  lines: z.array(HotMemoryLine),
  tokens: z.int(),
  maxTokens: z.int(),
  overflow: z
    .object({ at: z.string(), path: MemoryWritePath, tokens: z.int(), maxTokens: z.int(), pendingLines: z.array(HotMemoryLine), message: z.string() })
    .nullable()
    .describe('set when a write could not be made to fit even after pruning: an admin should shorten the memory'),
  updatedBy: z.string(),
  updatedAt: z.string().nullable(),
});
export type HotMemory = z.infer<typeof HotMemory>;

export const HotMemoryVersion = z.object({
  version: z.int(),
  content: z.string(),
  lines: z.array(HotMemoryLine),
  tokens: z.int(),
  path: MemoryWritePath,
  actor: z.string(),
  reason: z.string(),
  createdAt: z.string(),
});
export type HotMemoryVersion = z.infer<typeof HotMemoryVersion>;
export const HotMemoryVersionList = z.object({ versions: z.array(HotMemoryVersion) });

export const MemoryWriteResult = z.object({
  changed: z.boolean().describe('false when everything written was already there'),
  memory: HotMemory,
  duplicates: z.array(z.string()),
});
export type MemoryWriteResult = z.infer<typeof MemoryWriteResult>;

/** PUT /api/iit/projects/:projectId/memory: the editor saves the whole document. */
export const ReplaceMemoryRequest = z.strictObject({
  content: z.string().max(100_000, 'must be at most 100000 characters').describe('markdown with ## Preferences / ## Current state / ## Prohibitions sections'),
  baseVersion: z.int().min(0).optional().describe('the version the editor opened; a newer one answers 409'),
  reason: z.string().max(500).optional(),
});
export type ReplaceMemoryRequest = z.input<typeof ReplaceMemoryRequest>;

export const AddFactsRequest = z.strictObject({
  facts: z.array(z.strictObject({ section: HotMemorySection, text: z.string().trim().min(1).max(500) })).min(1).max(50),
});
export type AddFactsRequest = z.input<typeof AddFactsRequest>;

export const RollbackMemoryRequest = z.strictObject({
  version: z.int().min(1).describe('the version to restore; it comes back as a new version'),
  reason: z.string().max(500).optional(),
});
export type RollbackMemoryRequest = z.input<typeof RollbackMemoryRequest>;

export const MemoryReport = z.object({
  id: z.string(),
  projectId: z.string(),
  kind: z.enum(['week', 'year']),
  periodStart: z.string(),
  periodEnd: z.string().describe('ISO instant the report reaches: the end of its week (or year), or, for a report of the week so far, when it was made'),
  partial: z.boolean().describe('true for a report of a week that had not ended when it was made (regenerate with this week\'s Monday); the weekly job replaces it with the full report'),
  label: z.string().describe('2026-W47, or 2025 for a yearly summary'),
  summary: z.string(),
  tokens: z.int(),
  sourceCount: z.int(),
  generatedBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type MemoryReport = z.infer<typeof MemoryReport>;
export const MemoryReportList = z.object({ reports: z.array(MemoryReport) });
export const MemoryReportQuery = z.strictObject({ kind: z.enum(['week', 'year']).optional(), limit: z.int().min(1).max(500).default(100) });
export const RegenerateReportRequest = z.strictObject({
  weekStart: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD, the Monday of the week').describe("the Monday of the ISO week, e.g. 2026-11-16; this week's Monday gives a report of the week so far (partial)"),
});
export type RegenerateReportRequest = z.input<typeof RegenerateReportRequest>;
export const RegenerateReportResult = z.object({
  stored: z.boolean().describe('true when the new report was written; false when the model failed (unavailable, or its answer unusable) and nothing was stored'),
  report: MemoryReport.nullable().describe('the new report, or when nothing was stored the report of that week that still stands (null when there is none yet)'),
  notice: z.string().nullable().describe('when nothing was stored: a plain sentence for the person saying so, why, and which report stands; null otherwise'),
});
export type RegenerateReportResult = z.infer<typeof RegenerateReportResult>;

export const FeedbackRequest = z.strictObject({
  conversationId: Uuid,
  turnSeq: z.int().min(1).describe('the assistant turn rated (turnSeq of the chat answer)'),
  rating: z.enum(['up', 'down']),
  comment: z.string().max(2000).optional(),
});
export type FeedbackRequest = z.input<typeof FeedbackRequest>;
export const Feedback = z.object({
  id: z.string(),
  projectId: z.string(),
  conversationId: z.string(),
  turnSeq: z.int(),
  userId: z.string(),
  rating: z.enum(['up', 'down']),
  comment: z.string(),
  distilledAt: z.string().nullable().describe('when the daily distillation read it'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Feedback = z.infer<typeof Feedback>;
export const FeedbackList = z.object({ feedback: z.array(Feedback) });

export const UserProfile = z.object({
  userId: z.string(),
  detailLevel: z.enum(['brief', 'standard', 'detailed']),
  language: z.enum(['auto', 'zh', 'en']),
  roleTitle: z.string().describe('the user\'s job in the trial, e.g. PI, CRC, data manager'),
  updatedAt: z.string().nullable(),
});
export type UserProfile = z.infer<typeof UserProfile>;
export const UpdateProfileRequest = z.strictObject({
  detailLevel: z.enum(['brief', 'standard', 'detailed']).optional(),
  language: z.enum(['auto', 'zh', 'en']).optional(),
  roleTitle: z.string().max(60).optional(),
});
export type UpdateProfileRequest = z.input<typeof UpdateProfileRequest>;
