import type { ChatMessage } from '../../core/llm/types.js';
import type { HistoryStrategy } from './history-strategy.js';
import { summaryMessage } from './summarize-turns.js';
import { groupTurns, windowStart } from './turn-groups.js';
import { groupsToMessages } from './turns-to-messages.js';
import type { ConversationTurn } from './types.js';

/** The summary state stored on the conversation, and how to extend it. */
interface SummaryState {
  summary: string | null;
  summarizedThroughSeq: number;
  /** Condenses the previous summary plus `turns` into a new one (one model call). */
  summarize(previousSummary: string | null, turns: ConversationTurn[]): Promise<string>;
  /** Stores the new summary as covering turns 1..throughSeq. */
  save(summary: string, throughSeq: number): Promise<void>;
}

/** Applies a history strategy to a conversation's turns (in seq order). */
export async function buildHistory(allTurns: readonly ConversationTurn[], strategy: HistoryStrategy, state: SummaryState): Promise<ChatMessage[]> {
  const turns = strategy.textOnly ? allTurns.filter(isTextTurn) : allTurns;
  const groups = groupTurns(turns);
  switch (strategy.strategy) {
    case 'none':
      return [];
    case 'full':
      return groupsToMessages(groups.slice(windowStart(groups, { maxTokens: strategy.maxTokens })));
    case 'sliding_window':
      return groupsToMessages(groups.slice(windowStart(groups, strategy)));
    case 'summary':
      return summaryHistory(turns, groups, strategy, state);
  }
}

async function summaryHistory(
  turns: readonly ConversationTurn[],
  groups: ReturnType<typeof groupTurns>,
  strategy: Extract<HistoryStrategy, { strategy: 'summary' }>,
  state: SummaryState,
): Promise<ChatMessage[]> {
  const start = windowStart(groups, { maxTurns: strategy.keepTurns, maxTokens: strategy.maxTokens });
  // Everything up to the last turn before the kept window belongs in the summary.
  const outOfWindowSeq = start > 0 ? groups[start - 1]!.lastSeq : 0;
  let { summary, summarizedThroughSeq } = state;
  // Only turns that newly fell out of the window cost a model call; otherwise the stored summary is reused.
  if (outOfWindowSeq > summarizedThroughSeq) {
    const fallenOut = turns.filter((turn) => turn.seq > summarizedThroughSeq && turn.seq <= outOfWindowSeq);
    summary = await state.summarize(summary, fallenOut);
    summarizedThroughSeq = outOfWindowSeq;
    await state.save(summary, summarizedThroughSeq);
  }
  // A window that grew back (a larger keepTurns) still starts after the summary, so no turn is sent twice.
  const kept = groupTurns(turns.filter((turn) => turn.seq > Math.max(summarizedThroughSeq, outOfWindowSeq)));
  const messages = groupsToMessages(kept);
  return summary ? [summaryMessage(summary), ...messages] : messages;
}

/** A user or assistant turn with text and no tool calls: what a `textOnly` history keeps. */
function isTextTurn(turn: ConversationTurn): boolean {
  return (turn.role === 'user' || turn.role === 'assistant') && !turn.toolCalls?.length && turn.content.trim() !== '';
}
