import { ClinAgentError } from '../../core/errors.js';
import type { AgentDefinition } from '../definitions/agent-definition.js';
import { agentKind } from '../definitions/describe-agent.js';
import type { AgentRegistry } from '../definitions/registry.js';
import type { ScenarioCatalog } from './catalog.js';
import type { Scenario } from './load.js';

/** Where a scenario run's definition comes from: the agent registry, and the catalog for what only it knows. */
export interface ScenarioSources {
  agents: Pick<AgentRegistry, 'get' | 'has'>;
  scenarios: Pick<ScenarioCatalog, 'get'>;
}

/**
 * The definition a run of scenario `id` runs: the one the agent registry holds under that id (what GET /api/agents
 * lists, so every run resolves from one place), read as a scenario. The catalog answers only what the registry
 * cannot know: an id whose file is invalid (SCENARIO_INVALID with its problems, as the file never reached the
 * registry) and an unknown id (NOT_FOUND naming the scenarios, not every internal agent). An agent that is not a
 * scenario (the soft-rule judge, a one-round summary) is not run through the scenario routes.
 */
export function resolveScenario(sources: ScenarioSources, id: string): Scenario {
  const definition = sources.agents.has(id) ? sources.agents.get(id) : undefined;
  if (definition && isScenario(definition)) return definition;
  // Throws SCENARIO_INVALID or NOT_FOUND; a scenario the catalog has and the registry lacks is not served either.
  sources.scenarios.get(id);
  throw new ClinAgentError('NOT_FOUND', `Scenario "${id}" is not in the agent registry (GET /api/agents), so it cannot run.`, { scenarioId: id });
}

/** A definition compiled from a scenario file: its prompt is text and it declares its retrieval and documents. */
function isScenario(definition: AgentDefinition<any, any>): definition is Scenario {
  const candidate = definition as Partial<Scenario>;
  return agentKind(definition) === 'scenario' && typeof definition.instructions === 'string' && typeof candidate.rag === 'object' && Array.isArray(candidate.documents);
}
