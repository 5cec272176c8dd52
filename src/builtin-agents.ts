import { SUMMARIZE_TURNS_DEFINITION } from './runtime/conversations/summarize-turns.js';
import type { AgentDefinition } from './runtime/definitions/index.js';
import { REFLEXION_DEFINITION } from './runtime/staged/reflexion.js';
import { INVESTIGATE_DEFINITION } from './investigate/index.js';
import { ROUTE_INTENT_DEFINITION } from './chat/index.js';
import { DISTILL_DEFINITION, PRUNE_DEFINITION, WEEKLY_REPORT_DEFINITION, YEARLY_SUMMARY_DEFINITION } from './memory/index.js';
import { SOFT_RULE_DEFINITION } from './trial/soft/index.js';

/**
 * The agents declared in code, next to their prompts in their areas. The list is assembled here, in the
 * composition root, because src/runtime may not import the areas that declare them.
 */
export function builtinAgentDefinitions(): AgentDefinition<any, any>[] {
  return [
    INVESTIGATE_DEFINITION,
    ROUTE_INTENT_DEFINITION,
    SOFT_RULE_DEFINITION,
    PRUNE_DEFINITION,
    // One-round agents: a model call with its answer schema, through the one loop like every other.
    DISTILL_DEFINITION,
    WEEKLY_REPORT_DEFINITION,
    YEARLY_SUMMARY_DEFINITION,
    REFLEXION_DEFINITION,
    SUMMARIZE_TURNS_DEFINITION,
  ];
}
