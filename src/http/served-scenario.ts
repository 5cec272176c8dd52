import type { User } from '../core/auth/users.js';
import { ClinAgentError } from '../core/errors.js';
import type { Scenario } from '../runtime/scenarios/load.js';
import { resolveScenario, type ScenarioSources } from '../runtime/scenarios/resolve-scenario.js';

/**
 * The scenario a route runs, as the agent registry holds it (resolveScenario), for every route that starts one
 * (POST /api/agent/run, its stream, POST /api/agent/runs). An invalid file's problems are for admins, who fix
 * scenario files (GET /api/scenarios lists them to admins only): a problem may quote the file, so anyone else
 * learns only that it is invalid.
 */
export function servedScenario(sources: ScenarioSources, scenarioId: string, user: User): Scenario {
  try {
    return resolveScenario(sources, scenarioId);
  } catch (error) {
    if (!ClinAgentError.isInstance(error) || error.code !== 'SCENARIO_INVALID' || user.role === 'admin') throw error;
    throw new ClinAgentError('SCENARIO_INVALID', `Scenario "${scenarioId}" is not served: its file is invalid. Ask an admin to fix it; admins see its problems in the scenario list (GET /api/scenarios) and the server's log.`, { scenarioId });
  }
}
