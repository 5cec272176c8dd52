import { ClinAgentError } from '../../../core/errors.js';
import type { Scenario } from '../../scenarios/load.js';

/**
 * The app key, read from the variable the scenario names at the moment it is needed (as REDCap tokens are), so
 * an administrator can set or rotate it without touching the file. Unset is the caller's to fix: a 4xx naming it.
 */
export function readDifyKey(scenario: Scenario, env: Readonly<Record<string, string | undefined>>): string {
  if (scenario.engine.type !== 'dify') throw new ClinAgentError('INTERNAL', `Scenario ${scenario.id} does not run on Dify.`);
  const name = scenario.engine.apiKeyEnv;
  const key = env[name]?.trim();
  if (!key) {
    throw new ClinAgentError('CONFIG_MISSING', `${name} is not set. Scenario ${scenario.id} runs a Dify app: set ${name} on the server to the app's API key (Dify: the app's API Access page, a key starting "app-") and restart.`, {
      field: name,
      scenarioId: scenario.id,
    });
  }
  return key;
}
