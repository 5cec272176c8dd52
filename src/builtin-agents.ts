import type { AgentDefinition } from './agent/definitions/index.js';
import { INVESTIGATE_DEFINITION } from './investigate/index.js';
import { PRUNE_DEFINITION, ROUTE_INTENT_DEFINITION } from './memory/index.js';
import { SOFT_RULE_DEFINITION } from './trial/soft/index.js';

/**
 * The agents declared in code, next to their prompts in their areas. The list is assembled here, in the
 * composition root, because src/agent may not import the areas that declare them.
 */
export function builtinAgentDefinitions(): AgentDefinition<any, any>[] {
  return [INVESTIGATE_DEFINITION, ROUTE_INTENT_DEFINITION, SOFT_RULE_DEFINITION, PRUNE_DEFINITION];
}
