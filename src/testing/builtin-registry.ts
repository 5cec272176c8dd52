import { builtinAgentDefinitions } from '../builtin-agents.js';
import type { ToolRegistry } from '../core/tools/registry.js';
import { createToolRegistry } from '../core/tools/registry.js';
import { createAgentRegistry, type AgentRegistry } from '../runtime/definitions/registry.js';

/**
 * A registry of the agents declared in code, as the server registers them: for a test that runs one of those agents
 * outside a whole context (a reflexion check, a report, the router). Runs resolve their definition from a registry
 * only; there is no constant to fall back on.
 */
export function builtinAgentRegistry(tools: Pick<ToolRegistry, 'list'> = createToolRegistry()): AgentRegistry {
  const agents = createAgentRegistry(tools);
  agents.registerAll(builtinAgentDefinitions());
  return agents;
}
