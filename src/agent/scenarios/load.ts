import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { errorMessage } from '../../core/errors.js';
import { loadDefinitionFile, loadDefinitionFiles, type DefinitionKind, type DefinitionSpec } from '../../core/definitions/index.js';
import { resolveOutputType, type OutputType } from '../../core/structured/output-types.js';
import { scenarioFileSchema } from './schema.js';
import { historyStrategyFromFile, type HistoryStrategy } from '../conversations/history-strategy.js';

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
  /** What the model sees again of a conversation it continues; `full` capped at 8000 tokens by default. */
  history: HistoryStrategy;
  /** Absolute paths of the documents shipped with the scenario, ingested at start-up. */
  documents: string[];
  /** The file the scenario came from, for error messages. */
  sourceFile: string;
}

export const SCENARIO_KIND: DefinitionKind = {
  noun: 'scenario',
  code: 'SCENARIO_INVALID',
  fileNames: /\.(ya?ml|json)$/i,
  folderSetting: 'SCENARIOS_DIR',
  formats: 'YAML/JSON',
  listRoute: 'GET /api/scenarios',
};

const scenarioSpec: DefinitionSpec<typeof scenarioFileSchema, Scenario> = { kind: SCENARIO_KIND, schema: scenarioFileSchema, build: buildScenario };

/** Reads and validates one scenario file; every problem is reported with the file and field. */
export function loadScenario(filePath: string): Scenario {
  return loadDefinitionFile(filePath, scenarioSpec);
}

/**
 * Loads every .yaml, .yml and .json file directly in `directory`. One invalid file fails the whole load,
 * listing every invalid file, so a typo is never silently dropped from the product.
 */
export function loadScenarios(directory: string): Scenario[] {
  return loadDefinitionFiles(directory, scenarioSpec);
}

/** What the schema cannot check: a collection when RAG is on, a known output type, documents that exist. */
function buildScenario(file: string, s: z.output<typeof scenarioFileSchema>, problems: string[]): Scenario {
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
    history: historyStrategyFromFile(s.history),
    documents,
    sourceFile: file,
  };
}
