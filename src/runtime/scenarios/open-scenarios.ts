import path from 'node:path';
import { readDefinitionFolder } from '../../core/definitions/index.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { createScenarioCatalog, type ScenarioCatalog } from './catalog.js';
import { scenarioSpec, type ScenarioPolicy } from './load.js';

/**
 * The scenarios of a server at start-up: every valid file of the folder is served, and each invalid one is logged
 * with all its problems (schema, documents, Dify URL and tools found in one pass) and listed by GET /api/scenarios,
 * so one typo in one file does not take every other agent down (as an invalid skill does not stop QC).
 * A folder that cannot be read still stops start-up: then no scenario is served at all.
 */
export function openScenarios(deps: { directory: string; policy: ScenarioPolicy; tools: ToolRegistry; logger: Pick<Logger, 'error'> }): ScenarioCatalog {
  const toolNames = new Set(deps.tools.list().map((tool) => tool.name));
  const { definitions, failures } = readDefinitionFolder(deps.directory, scenarioSpec({ ...deps.policy, toolNames }, path.resolve(deps.directory)));
  for (const failure of failures) {
    deps.logger.error(
      { file: failure.file, scenarioId: failure.id, problems: failure.problems },
      `scenario file ${failure.file} is invalid; ${failure.id ? `scenario "${failure.id}"` : 'it'} is not served until the file is fixed and the server restarted, the other scenarios serve:\n- ${failure.problems.join('\n- ')}`,
    );
  }
  // Problems as users see them (GET /api/scenarios, a run's 422): paths inside the folder relative to it, as the
  // files name them; the log line above keeps the full paths for the operator.
  const folder = path.resolve(deps.directory) + path.sep;
  const shown = failures.map((failure) => ({ ...failure, problems: failure.problems.map((problem) => problem.split(folder).join('')) }));
  return createScenarioCatalog(definitions, deps.tools, shown);
}
