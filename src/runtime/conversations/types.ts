import type { User } from '../../core/auth/users.js';
import type { TurnRole } from '../../core/db/schema/conversations.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { ChatMessage, ToolCallRequest } from '../../core/llm/types.js';
import type { TraceScope } from '../../core/trace/store.js';
import type { HistoryStrategy } from './history-strategy.js';

export type { TurnRole };

/** A conversation as lists show it. */
export interface ConversationSummary {
  id: string;
  userId: string;
  projectId: string | null;
  scenarioId: string | null;
  title: string;
  turnCount: number;
  createdAt: string;
  updatedAt: string;
}

/** One persisted turn; `seq` is 1, 2, 3... within its conversation. */
export interface ConversationTurn {
  seq: number;
  role: TurnRole;
  content: string;
  /** An assistant turn's tool calls as the model sent them; null on other turns. */
  toolCalls: ToolCallRequest[] | null;
  /** A tool turn: the call it answers. */
  toolCallId: string | null;
  toolName: string | null;
  /** Tokens the turn costs when sent back to the model (content and tool calls), counted with core/tokenizer. */
  tokens: number;
  traceId: string | null;
  createdAt: string;
}

export interface ConversationDetail extends ConversationSummary {
  /** The `summary` strategy's rolling summary of turns 1..summarizedThroughSeq, or null. */
  summary: string | null;
  summarizedThroughSeq: number;
  turns: ConversationTurn[];
}

/** A turn to append, as the agent loop produces it. */
export type TurnInput =
  | { role: 'user'; content: string; traceId?: string }
  | { role: 'assistant'; content?: string; toolCalls?: ToolCallRequest[]; traceId?: string }
  | { role: 'tool'; content: string; toolCallId: string; toolName?: string; traceId?: string };

export interface StartConversation {
  /** The id to give it (a UUID chosen by the caller, who may announce it before the write ends); a new one by default. */
  id?: string;
  actor: User;
  /** Membership is checked: a user can only hold conversations about projects they belong to. */
  projectId?: string;
  scenarioId?: string;
  /** Shown in lists; longer titles (a first question) are shortened, not refused. */
  title: string;
  /**
   * The conversation's first turns (an agent's input), written with it in one transaction: a new conversation's
   * first question is logged in one round trip rather than a start and an append, before the model sees it.
   */
  firstTurns?: TurnInput[];
}

export interface ListConversationsOptions {
  projectId?: string;
  scenarioId?: string;
  /** 1..200; 50 when absent. */
  limit?: number;
}

/** What `history` needs besides the conversation: who asks and, for the summary strategy, the model. */
export interface HistoryDeps {
  /** Only the owner continues a conversation. */
  actor: User;
  /** The gateway for the summary strategy; the store's own when absent. */
  llm?: LlmGateway;
  /** The run's trace: the summary call is recorded there as an `llm` span. */
  trace?: TraceScope;
  /** The scenario's model, when it names one. */
  model?: string;
  /** The scenario continuing it: a conversation belongs to the agent that started it (409 for another). */
  scenarioId?: string;
  signal?: AbortSignal;
}

/**
 * The raw log of every conversation: each turn persisted as it happens, with its user, project or scenario,
 * tokens and trace id. Every call takes the acting user and checks access itself, so no caller can forget it.
 */
export interface ConversationStore {
  start(input: StartConversation): Promise<ConversationSummary>;
  /**
   * Appends turns in order and returns them with their `seq`. Concurrent appends to one conversation never
   * collide: each takes the conversation's row lock and continues from the last seq.
   */
  append(conversationId: string, turns: TurnInput[], actor: User): Promise<ConversationTurn[]>;
  /** The owner or an admin; anyone else gets NOT_FOUND, exactly as for an id that does not exist. */
  get(id: string, actor: User): Promise<ConversationDetail>;
  /** Refuses (NOT_FOUND, FORBIDDEN, CONFLICT_STATE) as continuing it under `scenarioId` would, without reading its turns. */
  assertMayContinue(id: string, actor: User, scenarioId?: string): Promise<void>;
  /** The actor's own conversations, most recently active first. */
  list(actor: User, options?: ListConversationsOptions): Promise<ConversationSummary[]>;
  /** The messages to put before the new user message, built by `strategy` from the log. */
  history(conversationId: string, strategy: HistoryStrategy, deps: HistoryDeps): Promise<ChatMessage[]>;
  /** Another engine's id for this conversation (a Dify conversation id), for its owner continuing it; null before the first turn there. */
  engineRef(conversationId: string, actor: User): Promise<EngineRef | null>;
  /** Keeps the other engine's id, so the next turn continues the same conversation there. */
  setEngineRef(conversationId: string, ref: EngineRef, actor: User): Promise<void>;
}

/** A conversation's id on another engine (seed 004 section 11): `{ type: 'dify', conversationId }`. */
export interface EngineRef {
  type: string;
  conversationId: string;
}
