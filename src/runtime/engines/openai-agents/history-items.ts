import type { AgentInputItem } from '@openai/agents';
import type { ChatMessage } from '../../../core/llm/types.js';

/**
 * A conversation's history (built from our log by the scenario's strategy) as SDK input items: what was said by
 * whom. Tool calls of earlier turns are left out: their results were read into the answers that follow them, and
 * a call without its own SDK item ids would not be accepted as one.
 */
export function historyItems(messages: readonly ChatMessage[]): AgentInputItem[] {
  return messages.flatMap((message): AgentInputItem[] => {
    const text = typeof message.content === 'string' ? message.content : '';
    if (!text) return [];
    if (message.role === 'system') return [{ role: 'system', content: text }];
    if (message.role === 'user') return [{ role: 'user', content: text }];
    if (message.role === 'assistant') return [{ role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }];
    return [];
  });
}
