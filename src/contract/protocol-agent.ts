import { z } from 'zod';
import { OpenObject, Uuid } from './common.js';
import { runStreamDescription } from './run-events.js';

/**
 * The Protocol Agent's API (seed 001 section 4, with the seed's response shapes): a researcher goes from a vague
 * idea to a protocol draft, stage by stage. A protocol is its owner's: anyone else gets 404.
 */

/** An action card as the page shows it (seed ActionCardPayload). */
export const ActionCardPayload = z.object({
  cardId: z.string(),
  title: z.string(),
  description: z.string().optional(),
  iconType: z.string().optional(),
  actionType: z.enum(['deep_link', 'api_call', 'modal']),
  actionUrl: z.string().optional().describe('deep_link: the page to open, its inputs pre-filled in the query string'),
  actionParams: OpenObject.optional(),
  priority: z.number(),
});
export type ActionCardPayload = z.infer<typeof ActionCardPayload>;

export const StageProgress = z.object({
  current: z.number().int().describe('1-based position of the current stage'),
  total: z.number().int(),
  completedStages: z.array(z.string()),
});
export type StageProgress = z.infer<typeof StageProgress>;

/** POST /api/aia/protocol-agent/conversations */
export const StartProtocolRequest = z.strictObject({
  title: z.string().min(1).max(200).optional(),
  projectId: Uuid.optional().describe('the trial project the protocol is for; you must be its member'),
});
export type StartProtocolRequest = z.infer<typeof StartProtocolRequest>;
export const StartProtocolResponse = z.object({ conversationId: z.string(), currentStage: z.string(), stageProgress: StageProgress });
export type StartProtocolResponse = z.infer<typeof StartProtocolResponse>;

/** POST /api/aia/protocol-agent/chat (and .../chat/stream) */
export const ProtocolChatRequest = z.strictObject({
  conversationId: Uuid,
  message: z.string().min(1).max(20_000),
  attachments: z.array(z.string().max(2000)).max(10).optional(),
});
export type ProtocolChatRequest = z.infer<typeof ProtocolChatRequest>;

export const ProtocolChatResponse = z.object({
  traceId: z.string(),
  message: z.string().describe('the reply, without its <extracted_data> block'),
  thinkingContent: z.string().optional(),
  actionCards: z.array(ActionCardPayload),
  contextUpdate: z
    .object({ field: z.string(), data: OpenObject, confidence: z.number() })
    .nullable()
    .describe('what this message added to the context (only what the user said or a tool computed)'),
  currentStage: z.string(),
  stageStatus: z.enum(['in_progress', 'completed']),
  stageProgress: StageProgress,
  issues: z.array(z.string()).describe('reflexion findings the user should see (warn and block)'),
});
export type ProtocolChatResponse = z.infer<typeof ProtocolChatResponse>;

/** POST /api/aia/protocol-agent/stage/complete */
export const StageCompleteRequest = z.strictObject({ conversationId: Uuid });
export const StageCompleteResponse = z.object({
  success: z.boolean(),
  issues: z.array(z.string()).optional().describe('refused: each missing or inadequate item'),
  suggestions: z.array(z.string()).optional(),
  previousStage: z.string(),
  nextStage: z.string().optional(),
  summary: z.string().optional(),
  nextStageActionCards: z.array(ActionCardPayload).optional(),
});
export type StageCompleteResponse = z.infer<typeof StageCompleteResponse>;

const SpiritItem = z.object({ id: z.string().describe('the SPIRIT 2025 item number, e.g. "6a"'), section: z.string(), title: z.string() });
type SpiritItem = z.infer<typeof SpiritItem>;
export const SpiritCoverage = z.object({
  total: z.number().int(),
  covered: z.array(SpiritItem.extend({ from: z.array(z.string()).describe('the context fields that answer it') })),
  open: z.array(SpiritItem),
});
export type SpiritCoverage = z.infer<typeof SpiritCoverage>;

/** GET /api/aia/protocol-agent/context/:conversationId (seed ContextResponse, plus SPIRIT coverage) */
export const ProtocolContextResponse = z.object({
  id: z.string(),
  conversationId: z.string(),
  title: z.string(),
  projectId: z.string().nullable(),
  currentStage: z.string(),
  stageStatus: z.enum(['in_progress', 'completed']),
  overallProgress: z.number().describe('0..100: the share of stages completed'),
  completedStages: z.array(z.string()),
  stages: z.array(z.object({ stageId: z.string(), stageName: z.string(), contextField: z.string() })),
  scientificQuestion: OpenObject,
  pico: OpenObject,
  studyDesign: OpenObject,
  sampleSize: OpenObject,
  endpoints: OpenObject,
  actionCards: z.array(ActionCardPayload).describe('the cards of the current stage'),
  spirit: SpiritCoverage,
  updatedAt: z.string(),
});
export type ProtocolContextResponse = z.infer<typeof ProtocolContextResponse>;

/** PATCH /api/aia/protocol-agent/context/:conversationId: adds `value`'s keys to one context field. */
export const PatchProtocolContextRequest = z.strictObject({ field: z.string().max(100), value: OpenObject });
export type PatchProtocolContextRequest = z.infer<typeof PatchProtocolContextRequest>;

/** POST /api/aia/protocol-agent/action-callback */
export const ActionCallbackRequest = z.strictObject({ conversationId: Uuid, cardId: z.string().min(1).max(100), result: OpenObject });
export type ActionCallbackRequest = z.infer<typeof ActionCallbackRequest>;
export const ActionCallbackResponse = z.object({ applied: z.record(z.string(), z.unknown()).describe('context path -> value recorded'), context: ProtocolContextResponse });
export type ActionCallbackResponse = z.infer<typeof ActionCallbackResponse>;

export const ProtocolExportQuery = z.strictObject({ format: z.enum(['md', 'docx']).default('md') });

/** GET /api/aia/protocol-agent/conversations: the caller's protocols, newest first. */
const ProtocolSummary = z.object({ conversationId: z.string(), title: z.string(), currentStage: z.string(), completedStages: z.array(z.string()), updatedAt: z.string() });
export const ProtocolList = z.object({ protocols: z.array(ProtocolSummary) });
export type ProtocolList = z.infer<typeof ProtocolList>;
export const PROTOCOL_CHAT_STREAM_DESCRIPTION = runStreamDescription('the ChatResponse POST /api/aia/protocol-agent/chat returns');

/** GET /api/aia/protocol-agent/checks/:conversationId: the draft's eligibility and visit schedule as a QC skill, tested. */
export const ProtocolChecksResponse = z.object({
  skillId: z.string(),
  yaml: z.string().describe('the skill file: put it in the skills folder (SKILLS_DIR) of the trial'),
  rules: z.array(z.object({ ruleId: z.string(), source: z.string(), criterion: z.string() })),
  skipped: z.array(z.object({ text: z.string(), reason: z.string() })).describe('criteria that cannot be checked on data, and why'),
  verification: z.object({
    passed: z.boolean(),
    results: z.array(z.looseObject({ ruleId: z.string(), expected: z.string(), actual: z.string(), ok: z.boolean() })),
  }),
});
export type ProtocolChecksResponse = z.infer<typeof ProtocolChecksResponse>;

/** The admin API of staged agents' configurations (seed 001: stored with versions, seeded from YAML). */
const AgentConfigVersion = z.object({
  agentId: z.string(),
  version: z.int(),
  source: z.enum(['seed', 'admin']),
  seedVersion: z.int(),
  createdBy: z.string(),
  note: z.string(),
  createdAt: z.string(),
});
export const AgentConfigView = AgentConfigVersion.extend({ config: OpenObject });
export type AgentConfigView = z.infer<typeof AgentConfigView>;
export const AgentConfigVersionList = z.object({ versions: z.array(AgentConfigVersion) });
export const UpdateAgentConfigRequest = z.strictObject({ config: OpenObject.describe('the whole configuration (GET it, change it, PUT it back)'), note: z.string().max(500).optional() });
export type UpdateAgentConfigRequest = z.infer<typeof UpdateAgentConfigRequest>;
