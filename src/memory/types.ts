import type { AgentRegistry } from '../runtime/definitions/index.js';
import type { MembershipCheck } from '../core/auth/membership.js';
import type { User } from '../core/auth/users.js';
import type { Db } from '../core/db/connect.js';
import type {
  AnswerLanguage,
  DetailLevel,
  HotMemoryLine,
  HotMemorySection,
  MemoryLineSource,
  MemoryOverflow,
  MemoryReportKind,
  MemoryWritePath,
} from '../core/db/schema/memory.js';
import type { LlmGateway } from '../core/llm/gateway.js';
import type { Logger } from '../core/logger.js';
import type { TraceStore } from '../core/trace/store.js';
import type { ConversationStore } from '../runtime/conversations/index.js';

export type { AnswerLanguage, DetailLevel, HotMemoryLine, HotMemorySection, MemoryLineSource, MemoryOverflow, MemoryReportKind, MemoryWritePath };

/**
 * Project memory (seed 002): the raw conversation log lives in agent/conversations; this area keeps what is
 * distilled from it. Reads and writes that act for a user take that user first and check project membership
 * here (writers for changes); `system` functions are for jobs and for prompt assembly after the caller checked.
 */
export interface MemoryDeps {
  db: Db;
  llm: LlmGateway;
  /** The registry the memory writers' definitions are resolved from (the server's). */
  agents: Pick<AgentRegistry, 'get'>;
  trace: TraceStore;
  logger: Logger;
  users: MembershipCheck;
  conversations: ConversationStore;
  config: {
    /** Hot memory cap in tokens, counted with core/tokenizer (MEMORY_HOT_MAX_TOKENS, 2000). */
    hotMaxTokens: number;
    /** Weekly reports a history question reads at most (MEMORY_HISTORY_WEEKS, 50); older weeks come as yearly summaries. */
    historyWeeks: number;
  };
  /** The clock for when feedback is recorded; tests pass one that moves on each call. */
  now?: () => Date;
}

/** Hot memory as the API and the editor show it. */
export interface HotMemoryView {
  projectId: string;
  /** 0 before the first write. */
  version: number;
  /** Markdown rendered from `lines`: `## Preferences`, `## Current state`, `## Prohibitions`, one `- ` line each. */
  content: string;
  lines: HotMemoryLine[];
  tokens: number;
  maxTokens: number;
  overflow: MemoryOverflow | null;
  updatedBy: string;
  updatedAt: string | null;
}

export interface HotMemoryVersionView {
  version: number;
  content: string;
  lines: HotMemoryLine[];
  tokens: number;
  path: MemoryWritePath;
  actor: string;
  reason: string;
  createdAt: string;
}

/** What one write did. `changed: false` when everything written was already there (no version, no audit entry). */
export interface MemoryWriteResult {
  changed: boolean;
  memory: HotMemoryView;
  /** Facts skipped because the memory already held them (same section, same text ignoring case and spacing). */
  duplicates: string[];
}

export interface NewFact {
  section: HotMemorySection;
  text: string;
  source: MemoryLineSource;
}

export interface HotMemoryService {
  get(actor: User, projectId: string): Promise<HotMemoryView>;
  /** Newest first; the newest 100 unless `limit` (1..500) says otherwise. */
  versions(actor: User, projectId: string, options?: { limit?: number }): Promise<HotMemoryVersionView[]>;
  /** The editor (writers): the whole document as markdown. Lines whose text is unchanged keep their source. `baseVersion` guards against overwriting a newer edit (409). */
  replace(actor: User, projectId: string, input: { content: string; baseVersion?: number; reason?: string }): Promise<MemoryWriteResult>;
  /** Adds facts (the chat's memory intent with path 'chat', POST .../memory/facts with path 'api'); duplicates change nothing. */
  addFacts(actor: User, projectId: string, facts: NewFact[], path: 'chat' | 'api'): Promise<MemoryWriteResult>;
  /** Restores an earlier version's lines as a new version (writers). */
  rollback(actor: User, projectId: string, version: number, reason?: string): Promise<MemoryWriteResult>;
  /** For prompt assembly after the caller checked access: the memory as one declared data block (`<hot_memory>`), escaped. */
  promptBlock(projectId: string): Promise<string>;
  /** Jobs: distil the conversation log (and unread feedback) since the last distillation into new facts. */
  distill(projectId: string): Promise<{ changed: boolean; facts: number; turns: number; feedback: number; refused: number }>;
  /** Jobs: when over the cap, ask the model to condense; notify (overflow) if it still does not fit. */
  prune(projectId: string, options?: { pendingLines?: HotMemoryLine[]; path?: MemoryWritePath }): Promise<{ pruned: boolean; fits: boolean; tokens: number }>;
  /** Projects with conversation turns newer than their last distillation. */
  projectsToDistill(): Promise<string[]>;
}

export interface MemoryReportView {
  id: string;
  projectId: string;
  kind: MemoryReportKind;
  periodStart: string;
  /** ISO instant the report reaches: the end of its week (year), or when a report of the week so far was made. */
  periodEnd: string;
  /** A report of a week that had not ended when it was made; the weekly job replaces it with the full report. */
  partial: boolean;
  label: string;
  summary: string;
  tokens: number;
  sourceCount: number;
  generatedBy: string;
  createdAt: string;
  updatedAt: string;
}

/** What a regeneration came to, for the person who asked: a new report, or the one that still stands and why. */
export interface RegenerateReportResult {
  stored: boolean;
  /** The new report, or when nothing was stored the one that stands (null when the week has none yet). */
  report: MemoryReportView | null;
  /** When nothing was stored: a plain sentence saying so, why, and which report stands; null otherwise. */
  notice: string | null;
}

export interface MemoryReportsService {
  /** Newest first; weeks and years. */
  list(actor: User, projectId: string, options?: { kind?: MemoryReportKind; limit?: number }): Promise<MemoryReportView[]>;
  /**
   * Writers: (re)generate the report of the ISO week starting `weekStart` (a Monday, YYYY-MM-DD), replacing it. The
   * running week gives a report of the week so far (`partial`); a week that has not started is refused. A model
   * that fails (an outage, an unusable answer) is an answer too: nothing stored, the report that stands, a notice.
   */
  regenerate(actor: User, projectId: string, weekStart: string, now?: Date): Promise<RegenerateReportResult>;
  /** For prompt assembly (history intents only): yearly summaries of older years, then at most `historyWeeks` weekly reports, oldest first, as one `<history>` data block. '' when there are none. */
  promptBlock(projectId: string): Promise<string>;
  /** Jobs: the report of the week that ended before `now` (and any missing earlier week with turns), then the yearly roll-up. */
  generateDue(projectId: string, now?: Date): Promise<{ generated: string[] }>;
  /** Jobs: weeks older than the newest `historyWeeks` rolled into one summary per year. */
  rollUpYears(projectId: string): Promise<{ years: string[] }>;
  /** Projects with any conversation turn (candidates for the weekly job). */
  projectsWithConversations(): Promise<string[]>;
}

export interface FeedbackView {
  id: string;
  projectId: string;
  conversationId: string;
  turnSeq: number;
  userId: string;
  rating: 'up' | 'down';
  comment: string;
  distilledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface FeedbackService {
  /** Any member rates an assistant answer of a conversation of that project (their own rating; again replaces it). */
  record(actor: User, projectId: string, input: { conversationId: string; turnSeq: number; rating: 'up' | 'down'; comment?: string }): Promise<FeedbackView>;
  list(actor: User, projectId: string): Promise<FeedbackView[]>;
}

export interface UserProfileView {
  userId: string;
  detailLevel: DetailLevel;
  language: AnswerLanguage;
  roleTitle: string;
  updatedAt: string | null;
}

export interface ProfileService {
  /** Own profile, or anyone's for an admin; defaults when never set. */
  get(actor: User, userId: string): Promise<UserProfileView>;
  /** Own profile, or anyone's for an admin (audited). */
  put(actor: User, userId: string, input: { detailLevel?: unknown; language?: unknown; roleTitle?: unknown }): Promise<UserProfileView>;
  /** For prompt assembly: how this user likes answers, as one `<user_profile>` data block. */
  promptBlock(userId: string): Promise<string>;
}

export interface ProjectMemory {
  hot: HotMemoryService;
  reports: MemoryReportsService;
  feedback: FeedbackService;
  profiles: ProfileService;
}
