import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ClinAgentError, errorMessage, formatIssues } from '../../core/errors.js';
import { resolveOutputType, type OutputType } from '../../core/structured/output-types.js';
import { scenarioFileSchema } from './schema.js';

export interface Scenario {
  id: string;
  name: string;
  description: string;
  systemPrompt: string;
  rag: { enabled: boolean; collection: string; topK: number; maxContextTokens: number };
  tools: string[];
  outputType: OutputType;
  model: { name?: string; temperature?: number; maxTokens?: number };
  maxToolRounds: number;
  /** Absolute paths of the documents shipped with the scenario, ingested at start-up. */
  documents: string[];
  /** The file the scenario came from, for error messages. */
  sourceFile: string;
}

const SCENARIO_FILE = /\.(ya?ml|json)$/i;

/** Reads and validates one scenario file; every problem is reported with the file and field. */
export function loadScenario(filePath: string): Scenario {
  const file = path.resolve(filePath);
  let raw: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    raw = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ClinAgentError('SCENARIO_INVALID', `${file}: cannot be read as ${/\.json$/i.test(file) ? 'JSON' : 'YAML'}: ${errorMessage(error)}`, { file });
  }
  const parsed = scenarioFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues);
    throw new ClinAgentError('SCENARIO_INVALID', `${file} is not a valid scenario:\n- ${problems.join('\n- ')}`, { file, problems });
  }
  const s = parsed.data;
  const problems: string[] = [];
  if (s.rag.enabled && !s.rag.collection) problems.push('rag.collection: required when rag.enabled is true');
  let outputType: OutputType = { name: 'text' };
  try {
    outputType = typeof s.output_type === 'string' ? resolveOutputType(s.output_type) : { name: s.output_type.name, schema: s.output_type.schema, answerField: s.output_type.answer_field };
  } catch (error) {
    problems.push(`output_type: ${errorMessage(error)}`);
  }
  const documents = s.documents.map((doc) => path.resolve(path.dirname(file), doc));
  for (const [i, doc] of documents.entries()) {
    try {
      readFileSync(doc);
    } catch {
      problems.push(`documents.${i}: file ${doc} does not exist or cannot be read`);
    }
  }
  if (problems.length) {
    throw new ClinAgentError('SCENARIO_INVALID', `${file} is not a valid scenario:\n- ${problems.join('\n- ')}`, { file, problems });
  }
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    systemPrompt: s.system_prompt,
    rag: { enabled: s.rag.enabled, collection: s.rag.collection ?? '', topK: s.rag.top_k, maxContextTokens: s.rag.max_context_tokens },
    tools: s.tools,
    outputType,
    model: { name: s.model.name, temperature: s.model.temperature, maxTokens: s.model.max_tokens },
    maxToolRounds: s.max_tool_rounds,
    documents,
    sourceFile: file,
  };
}

/**
 * Loads every .yaml, .yml and .json file directly in `directory`. One invalid file fails the whole load,
 * listing every invalid file, so a typo is never silently dropped from the product.
 */
export function loadScenarios(directory: string): Scenario[] {
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => SCENARIO_FILE.test(name)).sort();
  } catch (error) {
    throw new ClinAgentError('CONFIG_INVALID', `Cannot read the scenarios folder ${directory}: ${errorMessage(error)}. Set SCENARIOS_DIR to a folder of scenario YAML/JSON files.`, { field: 'SCENARIOS_DIR' });
  }
  const scenarios: Scenario[] = [];
  const failures: string[] = [];
  const byId = new Map<string, string>();
  for (const name of names) {
    try {
      const scenario = loadScenario(path.join(directory, name));
      const other = byId.get(scenario.id);
      if (other) {
        failures.push(`${scenario.sourceFile}: id "${scenario.id}" is already used by ${other}; scenario ids must be unique`);
        continue;
      }
      byId.set(scenario.id, scenario.sourceFile);
      scenarios.push(scenario);
    } catch (error) {
      failures.push(errorMessage(error));
    }
  }
  if (failures.length) {
    throw new ClinAgentError('SCENARIO_INVALID', `Invalid scenario files in ${directory}:\n${failures.join('\n')}`, { directory, failures });
  }
  return scenarios;
}
