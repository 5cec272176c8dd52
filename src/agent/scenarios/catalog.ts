import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { Scenario } from './load.js';

export interface ScenarioCatalog {
  list(): Scenario[];
  /** Throws NOT_FOUND naming the known ids. */
  get(id: string): Scenario;
  has(id: string): boolean;
}

/**
 * The scenarios loaded at start-up. Tool names are checked against the registry here, so a scenario that
 * names a tool that does not exist stops start-up instead of failing in front of a user later.
 */
export function createScenarioCatalog(scenarios: Scenario[], tools: ToolRegistry): ScenarioCatalog {
  const problems = scenarios.flatMap((s) =>
    s.tools.filter((name) => !tools.get(name)).map((name) => `${s.sourceFile}: tools: "${name}" is not a registered tool (known: ${tools.list().map((t) => t.name).join(', ')})`),
  );
  if (problems.length) throw new ClinAgentError('SCENARIO_INVALID', `Scenario files name unknown tools:\n${problems.join('\n')}`, { problems });
  const byId = new Map(scenarios.map((s) => [s.id, s]));
  return {
    list: () => [...byId.values()],
    has: (id) => byId.has(id),
    get(id) {
      const scenario = byId.get(id);
      if (!scenario) {
        throw new ClinAgentError('NOT_FOUND', `Unknown scenario "${id}". Known scenarios: ${[...byId.keys()].join(', ') || '(none)'} (GET /api/scenarios).`, { scenarioId: id });
      }
      return scenario;
    },
  };
}
