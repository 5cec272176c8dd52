import type { ConversationRunState } from '../../runtime/runs/conversation-runs.js';
import type { ChatMessage } from '../../core/llm/types.js';
import type { MedicalContext, RiskAssessment } from './types.js';

/** One line of the consult as the patient saw it (the model's history holds its JSON decisions instead). */
export interface ConsultTurn {
  role: 'user' | 'assistant';
  content: string;
  quickOptions?: string[];
  attachmentId?: string;
  /** A user message's clientMessageId, when its client sent one: how a resend finds the turn it already made. */
  clientMessageId?: string;
  at: string;
}

export interface ConsultReply {
  response: string;
  quickOptions: string[];
  action: 'respond' | 'diagnose' | 'stopped';
  medicalContext: MedicalContext;
  riskLevel: RiskAssessment['risk_level'];
  redFlags: RiskAssessment['red_flags'];
  traceId: string;
}

/**
 * A consult's session state (seed 003 section 5), checkpointed with every step of its run: the model's messages,
 * its last decision, this turn's tool results, the medical context it keeps, the current response and quick
 * options, and the attachments (their bytes are in consult_attachments).
 */
export interface ConsultState extends ConversationRunState {
  title: string;
  status: 'open' | 'diagnosed';
  /** The model's conversation without its system message (rebuilt each turn with the current medical context). */
  messages: ChatMessage[];
  medicalContext: MedicalContext;
  decision?: Record<string, unknown>;
  toolResults: Array<{ tool: string; success: boolean; error?: string }>;
  currentResponse: string;
  quickOptions: string[];
  attachments: Array<{ id: string; mimeType: string; sizeBytes: number; createdAt: string }>;
  risk: RiskAssessment;
  /** Tokens the consult's model calls used, against its budget. */
  tokensUsed: number;
  turns: ConsultTurn[];
  lastReply?: ConsultReply;
  /**
   * What the consult's tools answered (search_medication, analyze_skin_image, assess_risk), every turn's, in order:
   * the dossier is built from these, not from the model's retelling of them. Absent in consults saved before.
   */
  toolOutputs?: RecordedToolOutput[];
  /** The diagnosis as the patient was shown it, kept when later replies (a record request) follow. */
  diagnosis?: { summary: string; readyReason?: string; traceId: string };
}

export interface RecordedToolOutput {
  tool: string;
  result: unknown;
  at: string;
}
