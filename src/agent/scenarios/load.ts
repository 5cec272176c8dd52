import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { errorMessage } from '../../core/errors.js';
import { loadDefinitionFile, loadDefinitionFiles, type DefinitionKind, type DefinitionSpec } from '../../core/definitions/index.js';
import { resolveOutputType, type OutputType } from '../../core/structured/output-types.js';
import { scenarioFileSchema } from './schema.js';
import { historyStrategyFromFile } from '../conversations/history-strategy.js';
import type { AgentDefinition, DecisionSpec, EngineSpec, StopSettings } from '../definitions/agent-definition.js';
import { difyBaseUrlProblem, type DifyUrlPolicy } from './dify-base-url.js';

/**
 * A scenario file compiled to the one AgentDefinition (seed 004 section 11), plus what only files declare: the
 * documents shipped with it and the retrieval over them. A scenario's instructions are always its system prompt
 * text (empty for a Dify app, which has its own).
 */
export interface Scenario extends AgentDefinition<string> {
  instructions: string;
  rag: { enabled: boolean; collection: string; topK: number; maxContextTokens: number };
  /** Absolute paths of the documents shipped with the scenario, ingested at start-up. */
  documents: string[];
}

/** What the server decides about scenario files, not the files themselves: today, which Dify base URLs they may name. */
export type ScenarioPolicy = DifyUrlPolicy;

export const SCENARIO_KIND: DefinitionKind = {
  noun: 'scenario',
  code: 'SCENARIO_INVALID',
  fileNames: /\.(ya?ml|json)$/i,
  folderSetting: 'SCENARIOS_DIR',
  formats: 'YAML/JSON',
  listRoute: 'GET /api/scenarios',
};

const scenarioSpec = (policy: ScenarioPolicy): DefinitionSpec<typeof scenarioFileSchema, Scenario> => ({
  kind: SCENARIO_KIND,
  schema: scenarioFileSchema,
  build: (file, parsed, problems) => buildScenario(file, parsed, problems, policy),
});

/** Reads and validates one scenario file; every problem is reported with the file and field. */
export function loadScenario(filePath: string, policy: ScenarioPolicy = {}): Scenario {
  return loadDefinitionFile(filePath, scenarioSpec(policy));
}

/**
 * Loads every .yaml, .yml and .json file directly in `directory`. One invalid file fails the whole load,
 * listing every invalid file, so a typo is never silently dropped from the product.
 */
export function loadScenarios(directory: string, policy: ScenarioPolicy = {}): Scenario[] {
  return loadDefinitionFiles(directory, scenarioSpec(policy));
}

const DEFAULT_RAG: NonNullable<ScenarioFileOutput['rag']> = { enabled: false, top_k: 5, max_context_tokens: 3000 };
const DEFAULT_HISTORY = { strategy: 'full', max_tokens: 8000 } as const;
const DEFAULT_MAX_TOOL_ROUNDS = 4;

/** What the schema cannot check: a collection when RAG is on, a known output type, documents that exist, a Dify URL. */
function buildScenario(file: string, s: ScenarioFileOutput, problems: string[], policy: ScenarioPolicy): Scenario {
  const rag = s.rag ?? DEFAULT_RAG;
  if (rag.enabled && !rag.collection) problems.push('rag.collection: required when rag.enabled is true');
  let output: OutputType = { name: 'text' };
  try {
    const declared = s.output_type ?? 'text';
    output = typeof declared === 'string' ? resolveOutputType(declared) : { name: declared.name, schema: declared.schema, answerField: declared.answer_field };
  } catch (error) {
    problems.push(`output_type: ${errorMessage(error)}`);
  }
  const documents = (s.documents ?? []).map((doc) => path.resolve(path.dirname(file), doc));
  for (const [i, doc] of documents.entries()) {
    try {
      readFileSync(doc);
    } catch {
      problems.push(`documents.${i}: file ${doc} does not exist or cannot be read`);
    }
  }
  const model = s.model ?? {};
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    sourceFile: file,
    instructions: s.system_prompt ?? '',
    tools: s.tools ?? [],
    // What the model says once tools are withheld is the answer; max_tool_rounds counts failed rounds too.
    toolUse: { whenWithheld: 'finish', scope: `in scenario ${s.id}`, toolRoundsCounted: 'all' },
    decision: decisionSpec(s.decision),
    output,
    stop: { ...stopSettings(s.stop), maxToolRounds: s.max_tool_rounds ?? DEFAULT_MAX_TOOL_ROUNDS },
    history: historyStrategyFromFile(s.history ?? DEFAULT_HISTORY),
    model: { name: model.name, temperature: model.temperature, maxTokens: model.max_tokens },
    engine: engineSpec(s.engine, problems, policy),
    rag: { enabled: rag.enabled, collection: rag.collection ?? '', topK: rag.top_k, maxContextTokens: rag.max_context_tokens },
    documents,
  };
}

type ScenarioFileOutput = z.output<typeof scenarioFileSchema>;

function decisionSpec(block: ScenarioFileOutput['decision']): DecisionSpec {
  if (!block || block.mode === 'native') return { mode: 'native' };
  return { mode: 'json', actions: block.actions ?? [], toolAction: block.tool_action ?? 'use_tool', ...(block.wait_on ? { waitOn: block.wait_on } : {}) };
}

function stopSettings(block: ScenarioFileOutput['stop']): StopSettings {
  if (!block) return {};
  const settings: StopSettings = { maxRounds: block.max_rounds, tokenBudget: block.token_budget, reasoningBudget: block.reasoning_budget, errorBreaker: block.error_breaker, attempts: block.attempts };
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

function engineSpec(block: ScenarioFileOutput['engine'], problems: string[], policy: ScenarioPolicy): EngineSpec {
  if (block.type !== 'dify') return { type: 'builtin' };
  const baseUrl = block.base_url ?? '';
  const problem = difyBaseUrlProblem(baseUrl, policy);
  if (problem) problems.push(`engine.base_url: ${problem}`);
  return { type: 'dify', baseUrl: baseUrl.replace(/\/+$/, ''), apiKeyEnv: block.api_key_env ?? '', appMode: block.app_mode ?? 'chat' };
}
