import { createDefinitionCatalog, type DefinitionCatalog } from '../../core/definitions/index.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { SCENARIO_KIND, type Scenario } from './load.js';

/** `get(id)` throws NOT_FOUND naming the known ids. */
export type ScenarioCatalog = DefinitionCatalog<Scenario>;

/**
 * The scenarios loaded at start-up. Tool names are checked against the registry here, so a scenario that
 * names a tool that does not exist stops start-up instead of failing in front of a user later.
 */
export function createScenarioCatalog(scenarios: Scenario[], tools: ToolRegistry): ScenarioCatalog {
  const problems = scenarios.flatMap((s) =>
    s.tools.filter((name) => !tools.get(name)).map((name) => `${s.sourceFile}: tools: "${name}" is not a registered tool (known: ${tools.list().map((t) => t.name).join(', ')})`),
  );
  if (problems.length) throw new ClinAgentError('SCENARIO_INVALID', `Scenario files name unknown tools:\n${problems.join('\n')}`, { problems });
  return createDefinitionCatalog(scenarios, SCENARIO_KIND);
}
