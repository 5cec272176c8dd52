import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { StagedAgentConfig } from './config.js';

/**
 * Reads a staged agent's shipped YAML (agents/<id>.v<N>.yaml) and checks it with the same validator the admin API
 * uses, so a broken file stops start-up naming the file, the stage and the field.
 */
export function loadStagedConfigFile(file: string, validate: (raw: unknown, source: string) => StagedAgentConfig): StagedAgentConfig {
  const source = path.basename(file);
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ClinAgentError('AGENT_INVALID', `${source}: cannot be read as YAML: ${errorMessage(error)}`, { file });
  }
  return validate(raw, source);
}
