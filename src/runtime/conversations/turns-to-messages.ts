import type { ChatMessage } from '../../core/llm/types.js';
import type { TurnGroup } from './turn-groups.js';

/**
 * The chat messages of groups of turns. An assistant turn keeps only the tool calls that were answered (a run
 * stopped between the call and its result leaves one unanswered, and the API would refuse it); if none was and
 * it has no text either, it is left out.
 */
export function groupsToMessages(groups: readonly TurnGroup[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const group of groups) {
    const [head, ...answers] = group.turns;
    if (!head) continue;
    if (head.role === 'user') {
      messages.push({ role: 'user', content: head.content });
      continue;
    }
    const answered = new Set(answers.map((answer) => answer.toolCallId));
    const calls = (head.toolCalls ?? []).filter((call) => answered.has(call.id));
    if (!calls.length) {
      if (head.content) messages.push({ role: 'assistant', content: head.content });
      continue;
    }
    messages.push({
      role: 'assistant',
      content: head.content || null,
      tool_calls: calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })),
    });
    for (const answer of answers) messages.push({ role: 'tool', tool_call_id: answer.toolCallId!, content: answer.content });
  }
  return messages;
}
