import path from 'node:path';
import { createDefinitionCatalog, type DefinitionCatalog, type DefinitionFailure } from '../../core/definitions/index.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { SCENARIO_KIND, type Scenario } from './load.js';

/** A scenario file that did not load: not served; a run of its id is refused naming these problems. */
export type InvalidScenario = DefinitionFailure;

/** `get(id)` throws NOT_FOUND naming the known ids, or SCENARIO_INVALID with every problem of an id whose file is invalid. */
export interface ScenarioCatalog extends DefinitionCatalog<Scenario> {
  /** The files of the folder that did not load, each with every problem. */
  invalid(): readonly InvalidScenario[];
}

/**
 * The scenarios loaded at start-up. Tool names are checked against the registry here, so a scenario that
 * names a tool that does not exist stops start-up instead of failing in front of a user later. `invalid` are the
 * files openScenarios kept out: the catalog answers their ids with their problems rather than "unknown".
 */
export function createScenarioCatalog(scenarios: Scenario[], tools: ToolRegistry, invalid: readonly InvalidScenario[] = []): ScenarioCatalog {
  const problems = scenarios.flatMap((s) =>
    s.tools.filter((name) => !tools.get(name)).map((name) => `${s.sourceFile}: tools: "${name}" is not a registered tool (known: ${tools.list().map((t) => t.name).join(', ')})`),
  );
  if (problems.length) throw new ClinAgentError('SCENARIO_INVALID', `Scenario files name unknown tools:\n${problems.join('\n')}`, { problems });
  const catalog = createDefinitionCatalog(scenarios, SCENARIO_KIND);
  return {
    ...catalog,
    invalid: () => invalid,
    get(id) {
      const failed = !catalog.has(id) && invalid.find((file) => file.id === id);
      if (failed) {
        // Any signed-in user may ask for it: the file's name, not the server's folder (the start-up log has that).
        throw new ClinAgentError('SCENARIO_INVALID', `Scenario "${id}" is not served: its file ${path.basename(failed.file)} is invalid. Fix it and restart the server:\n- ${failed.problems.join('\n- ')}`, { scenarioId: id, problems: failed.problems });
      }
      return catalog.get(id);
    },
  };
}
