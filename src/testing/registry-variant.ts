import type { ToolRegistry } from '../core/tools/registry.js';
import type { AgentDefinition, PromptBuilder } from '../runtime/definitions/agent-definition.js';
import { createAgentRegistry, type AgentRegistry } from '../runtime/definitions/registry.js';

/**
 * A registry of the same agents as `agents`, the one of `id` replaced: a test context's registry holding another
 * definition under that id, so a test can see that a run uses what the registry holds rather than a constant.
 */
export function registryReplacing(tools: Pick<ToolRegistry, 'list'>, agents: Pick<AgentRegistry, 'list'>, id: string, replace: (definition: AgentDefinition<any, any>) => AgentDefinition<any, any>): AgentRegistry {
  const registry = createAgentRegistry(tools);
  registry.registerAll(agents.list().map((definition) => (definition.id === id ? replace(definition) : definition)));
  return registry;
}

/** The definition with a system message of its own before its prompt: the model's request shows which definition ran. */
export function withLeadingSystemMessage<I, O>(definition: AgentDefinition<I, O>, content: string): AgentDefinition<I, O> {
  const build = definition.instructions;
  if (typeof build === 'string') return { ...definition, instructions: `${content}\n\n${build}` };
  return { ...definition, instructions: (input: I) => [{ role: 'system', content }, ...(build as PromptBuilder<I>)(input)] };
}
