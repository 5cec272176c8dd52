import { parseStructuredOutput } from '../../core/structured/parse.js';

/**
 * Structured decisions (seed 003): instead of native function calling the model answers with one JSON object
 * whose `action` says what it does next, e.g. `{"action": "use_tool", "tool": "...", "tool_input": {...}}`,
 * `{"action": "respond", ...}` or `{"action": "diagnose", ...}`. Models without function calling (and agents that
 * want one answer shape every round) work through the same loop; the shared tolerant parser reads the JSON.
 */
export interface DecisionMode {
  /** The actions the model may take, the tool action included (e.g. use_tool, respond, diagnose). */
  actions: readonly string[];
  /** The action that calls a tool; its `tool` and `arguments` fields name the call. */
  toolAction: string;
  /** Actions that end the turn waiting for a person: their answer, or their approval of what the decision proposes. */
  waitOn?: Readonly<Record<string, 'answer' | 'approval'>>;
}

type Decision =
  | { kind: 'use_tool'; tool: string; arguments: string; data: Record<string, unknown> }
  | { kind: 'final'; action: string; data: Record<string, unknown> }
  | { kind: 'invalid'; problems: string[]; truncated?: boolean };

export function readDecision(content: string, mode: DecisionMode): Decision {
  const parsed = parseStructuredOutput(content, {
    name: 'agent_decision',
    schema: { type: 'object', properties: { action: { type: 'string', enum: [...mode.actions] } }, required: ['action'] },
  });
  if (!parsed.success) return { kind: 'invalid', problems: [`(root): ${parsed.error}; answer with one JSON object whose "action" is one of ${mode.actions.join(', ')}`], truncated: parsed.truncated };
  const action = parsed.data.action;
  if (typeof action !== 'string' || !mode.actions.includes(action)) {
    return { kind: 'invalid', problems: [`action: must be one of ${mode.actions.join(', ')}, got ${JSON.stringify(action ?? null)}`] };
  }
  if (action !== mode.toolAction) return { kind: 'final', action, data: parsed.data };
  const tool = parsed.data.tool;
  if (typeof tool !== 'string' || !tool) return { kind: 'invalid', problems: [`tool: required with action "${mode.toolAction}": the name of the tool to use`] };
  // Seed 003 names the arguments `tool_input`; `arguments` is the other common spelling.
  const args = parsed.data.arguments ?? parsed.data.tool_input ?? {};
  return { kind: 'use_tool', tool, arguments: typeof args === 'string' ? args : JSON.stringify(args), data: parsed.data };
}
