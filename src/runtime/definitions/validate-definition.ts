import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { AgentDefinition, StopSettings } from './agent-definition.js';

const STOP_FIELDS = ['maxRounds', 'maxToolRounds', 'tokenBudget', 'reasoningBudget', 'errorBreaker', 'attempts'] as const satisfies ReadonlyArray<keyof StopSettings>;
/** No tool round at all is a real setting (a scenario's `max_tool_rounds: 0`); no model call or no budget is not. */
const ZERO_ALLOWED: ReadonlySet<string> = new Set(['maxToolRounds']);
const WAIT_KINDS = ['answer', 'approval'];

/**
 * Every problem of a definition at once, one line each: `<sourceFile>: <field>: <what is wrong>; <what is allowed>`.
 * A definition that passes runs as declared: its tools exist, its decisions can end, its limits can be reached.
 */
export function definitionProblems(definition: AgentDefinition<any, any>, tools: Pick<ToolRegistry, 'list'>): string[] {
  const problems: string[] = [];
  const at = (field: string, message: string) => problems.push(`${definition.sourceFile}: ${field}: ${message}`);
  const known = tools.list().map((tool) => tool.name);
  definition.tools.forEach((name, i) => {
    if (!known.includes(name)) at(`tools.${i}`, `"${name}" is not a registered tool (known: ${known.join(', ') || '(none)'})`);
  });
  const decision = definition.decision;
  if (decision.mode === 'json') {
    // An agent without tools never uses its tool action, so it need not list it (a consult that only asks and answers).
    if (definition.tools.length && !decision.actions.includes(decision.toolAction)) at('decision.toolAction', `"${decision.toolAction}" is not one of decision.actions (${decision.actions.join(', ')}); an agent with tools must list the action that uses one`);
    for (const [action, kind] of Object.entries(decision.waitOn ?? {})) {
      if (action === decision.toolAction) at(`decision.waitOn.${action}`, `the tool action cannot wait for a person; name one of the other actions (${decision.actions.filter((a) => a !== decision.toolAction).join(', ')})`);
      else if (!decision.actions.includes(action)) at(`decision.waitOn.${action}`, `"${action}" is not one of decision.actions (${decision.actions.join(', ')})`);
      if (!WAIT_KINDS.includes(kind)) at(`decision.waitOn.${action}`, `waits for "${String(kind)}"; allowed: answer, approval`);
    }
  }
  for (const field of STOP_FIELDS) {
    const value = definition.stop[field];
    const least = ZERO_ALLOWED.has(field) ? 0 : 1;
    if (value !== undefined && !(Number.isInteger(value) && value >= least)) at(`stop.${field}`, `must be a whole number of at least ${least}, got ${JSON.stringify(value)}; leave it out for no limit`);
  }
  const seen = new Set<string>();
  definition.stages?.forEach((stage, i) => {
    if (seen.has(stage.id)) at(`stages.${i}.id`, `"${stage.id}" is already the id of an earlier stage; stage ids must be unique`);
    seen.add(stage.id);
  });
  return problems;
}

/** Throws AGENT_INVALID listing every problem of the definition. */
export function validateDefinition(definition: AgentDefinition<any, any>, tools: Pick<ToolRegistry, 'list'>): void {
  const problems = definitionProblems(definition, tools);
  if (problems.length) {
    throw new ClinAgentError('AGENT_INVALID', `Agent "${definition.id}" is not valid:\n${problems.join('\n')}`, { agentId: definition.id, sourceFile: definition.sourceFile, problems });
  }
}
