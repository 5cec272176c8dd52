import path from 'node:path';
import type { z } from 'zod';
import { loadDefinitionFile, loadDefinitionFiles, type DefinitionKind, type DefinitionSpec } from '../../core/definitions/index.js';
import { resolveOutputType, type OutputType } from '../../core/structured/output-types.js';
import { scenarioFileSchema, scenarioFileSchemaFor } from './schema.js';
import { historyStrategyFromFile } from '../conversations/history-strategy.js';
import type { AgentDefinition, DecisionSpec, EngineSpec, StopSettings } from '../definitions/agent-definition.js';
import type { DifyUrlPolicy } from './dify-base-url.js';
import type { McpToolSource } from './mcp-block.js';

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

/**
 * What the server decides about scenario files, not the files themselves: which Dify base URLs they may name, and
 * (when given) the tools that exist, so an unknown tool is reported with the file's other problems.
 */
export type ScenarioPolicy = DifyUrlPolicy & { toolNames?: ReadonlySet<string>; mcp?: McpToolSource };

export const SCENARIO_KIND: DefinitionKind = {
  noun: 'scenario',
  code: 'SCENARIO_INVALID',
  fileNames: /\.(ya?ml|json)$/i,
  folderSetting: 'SCENARIOS_DIR',
  formats: 'YAML/JSON',
  listRoute: 'GET /api/scenarios',
};

export const scenarioSpec = (policy: ScenarioPolicy, baseDir: string): DefinitionSpec<typeof scenarioFileSchema, Scenario> => ({
  kind: SCENARIO_KIND,
  schema: scenarioFileSchemaFor({ baseDir, policy, toolNames: policy.toolNames, mcp: policy.mcp }),
  build: (file, parsed) => buildScenario(file, parsed, policy.mcp),
});

/** Reads and validates one scenario file; every problem is reported at once, with the file and field. */
export function loadScenario(filePath: string, policy: ScenarioPolicy = {}): Scenario {
  return loadDefinitionFile(filePath, scenarioSpec(policy, path.dirname(path.resolve(filePath))));
}

/**
 * Loads every .yaml, .yml and .json file directly in `directory`. One invalid file fails the whole load,
 * listing every invalid file, so a typo is never silently dropped (the server uses openScenarios instead, which
 * serves the valid files and reports the others).
 */
export function loadScenarios(directory: string, policy: ScenarioPolicy = {}): Scenario[] {
  return loadDefinitionFiles(directory, scenarioSpec(policy, path.resolve(directory)));
}

const DEFAULT_RAG: NonNullable<ScenarioFileOutput['rag']> = { enabled: false, top_k: 5, max_context_tokens: 3000 };
const DEFAULT_HISTORY = { strategy: 'full', max_tokens: 8000 } as const;
const DEFAULT_MAX_TOOL_ROUNDS = 4;

/** A file that passed its schema (scenarioFileSchemaFor checked documents, output type and Dify URL too) as a Scenario. */
function buildScenario(file: string, s: ScenarioFileOutput, mcp: McpToolSource | undefined): Scenario {
  const rag = s.rag ?? DEFAULT_RAG;
  const declared = s.output_type ?? 'text';
  const output: OutputType = typeof declared === 'string' ? resolveOutputType(declared) : { name: declared.name, schema: declared.schema, answerField: declared.answer_field };
  const documents = (s.documents ?? []).map((doc) => path.resolve(path.dirname(file), doc));
  const model = s.model ?? {};
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    sourceFile: file,
    instructions: s.system_prompt ?? '',
    // The schema refused `mcp` entries when no MCP server is configured, so `mcp` is there whenever s.mcp is.
    tools: [...new Set([...(s.tools ?? []), ...(s.mcp ?? []).flatMap((entry) => entry.tools.map((tool) => mcp!.admit(entry.server, tool)))])],
    // What the model says once tools are withheld is the answer; max_tool_rounds counts failed rounds too.
    toolUse: { whenWithheld: 'finish', scope: `in scenario ${s.id}`, toolRoundsCounted: 'all' },
    decision: decisionSpec(s.decision),
    output,
    stop: { ...stopSettings(s.stop), maxToolRounds: s.max_tool_rounds ?? DEFAULT_MAX_TOOL_ROUNDS },
    history: historyStrategyFromFile(s.history ?? DEFAULT_HISTORY),
    model: { name: model.name, temperature: model.temperature, maxTokens: model.max_tokens },
    engine: engineSpec(s.engine),
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

function engineSpec(block: ScenarioFileOutput['engine']): EngineSpec {
  if (block.type === 'openai-agents') return { type: 'openai-agents' };
  if (block.type !== 'dify') return { type: 'builtin' };
  const appMode = block.app_mode ?? 'chat';
  return {
    type: 'dify',
    baseUrl: (block.base_url ?? '').replace(/\/+$/, ''),
    apiKeyEnv: block.api_key_env ?? '',
    appMode,
    inputs: block.inputs ?? {},
    ...(block.input_variable ?? (appMode === 'completion' ? 'query' : undefined) ? { inputVariable: block.input_variable ?? 'query' } : {}),
    ...(block.output_key ? { outputKey: block.output_key } : {}),
  };
}
