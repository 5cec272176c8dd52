import type { ConversationTurn } from './types.js';

/**
 * Turns that go to the model together or not at all: a user turn, a plain assistant turn, or an assistant
 * turn that calls tools with the tool turns answering it. OpenAI-compatible APIs refuse a tool message whose
 * call is not in the assistant message before it, and an assistant message whose calls go unanswered, so a
 * window is only ever cut between groups.
 */
export interface TurnGroup {
  turns: ConversationTurn[];
  tokens: number;
  firstSeq: number;
  lastSeq: number;
}

/** Groups turns (in seq order). A tool turn with no matching call before it (a broken log) is left out. */
export function groupTurns(turns: readonly ConversationTurn[]): TurnGroup[] {
  const groups: TurnGroup[] = [];
  let i = 0;
  while (i < turns.length) {
    const turn = turns[i]!;
    i++;
    if (turn.role === 'tool') continue;
    const members = [turn];
    if (turn.role === 'assistant' && turn.toolCalls?.length) {
      const callIds = new Set(turn.toolCalls.map((call) => call.id));
      while (i < turns.length && turns[i]!.role === 'tool') {
        const answer = turns[i]!;
        i++;
        // Each call answered once: a second answer to the same call is refused by the API like an orphan.
        if (answer.toolCallId && callIds.delete(answer.toolCallId)) members.push(answer);
      }
    }
    groups.push({ turns: members, tokens: members.reduce((sum, t) => sum + t.tokens, 0), firstSeq: turn.seq, lastSeq: members[members.length - 1]!.seq });
  }
  return groups;
}

/**
 * Index of the first group of the newest run of groups within both limits; `groups.length` when not even the
 * newest fits. Counting stops at the first group that does not fit: a window has no gaps.
 */
export function windowStart(groups: readonly TurnGroup[], limits: { maxTurns?: number; maxTokens?: number }): number {
  let turns = 0;
  let tokens = 0;
  let start = groups.length;
  for (let i = groups.length - 1; i >= 0; i--) {
    const group = groups[i]!;
    if (limits.maxTurns !== undefined && turns + group.turns.length > limits.maxTurns) break;
    if (limits.maxTokens !== undefined && tokens + group.tokens > limits.maxTokens) break;
    turns += group.turns.length;
    tokens += group.tokens;
    start = i;
  }
  return start;
}
