/**
 * The message pipeline's own vocabulary (seed 001 sections 2.2-2.4): what query analysis found, what the planner
 * decided, and what a staged agent's run keeps between messages.
 */

export type IntentType = 'provide_info' | 'ask_question' | 'request_change' | 'confirm_complete' | 'request_tool' | 'chitchat' | 'unclear';

export interface QueryAnalysisResult {
  intent: { primary: IntentType; confidence: number };
  resolvedQuery: string;
  requiresClarification: boolean;
}

export type ExecutionStrategy = 'guide_and_extract' | 'answer_question' | 'update_context' | 'trigger_tool' | 'transition_stage' | 'request_clarification' | 'handle_chitchat';

export interface ExecutionPlan {
  strategy: ExecutionStrategy;
  toolsNeeded: string[];
  shouldExtract: boolean;
  shouldReflect: boolean;
  /** The stage may move on after this message (auto and condition transitions; a user asking to complete it). */
  tryTransition: boolean;
  planReason: string;
}

export interface ActionCardPayload {
  cardId: string;
  title: string;
  description?: string;
  iconType?: string;
  actionType: 'deep_link' | 'api_call' | 'modal';
  actionUrl?: string;
  actionParams?: Record<string, unknown>;
  priority: number;
}

export interface StageProgress {
  current: number;
  total: number;
  completedStages: string[];
}

/** One line of the history the prompt shows (the conversation log keeps the same turns for the lists). */
export interface HistoryLine {
  role: 'user' | 'assistant';
  content: string;
  stageId: string;
}

/** Seed ChatResponse, plus the reflexion issues the user should see. */
export interface StagedChatResponse {
  traceId: string;
  message: string;
  actionCards: ActionCardPayload[];
  contextUpdate: { field: string; data: Record<string, unknown>; confidence: number } | null;
  currentStage: string;
  stageStatus: 'in_progress' | 'completed';
  stageProgress: StageProgress;
  issues: string[];
}

/** Seed StageCompleteResponse. */
export interface StageCompleteResult {
  success: boolean;
  issues?: string[];
  suggestions?: string[];
  previousStage: string;
  nextStage?: string;
  summary?: string;
  nextStageActionCards?: ActionCardPayload[];
}

/**
 * A staged agent's checkpoint, saved with every step of its run: the stage it is at, what it has collected, and
 * the answer to the last thing the user did (read by the request that is waiting for it).
 */
export interface StagedRunState {
  agentId: string;
  title: string;
  currentStage: string;
  /** All stages done: the protocol is complete (still open for questions, edits and exports). */
  finished: boolean;
  completedStages: string[];
  /** Context field -> the stage's data. */
  context: Record<string, Record<string, unknown>>;
  history: HistoryLine[];
  /** The config version the last step used. */
  configVersion?: number;
  traceIds: string[];
  /** What the last step answered, for the request that brought it (or a client that reloads). */
  last?: { kind: 'message'; response: StagedChatResponse } | { kind: 'complete'; response: StageCompleteResult };
  /** The last input could not be taken (the model was down): the request that brought it reports this. */
  lastError?: { code: string; message: string };
  updatedAt: string;
}
