import { ClinAgentError } from '../../core/errors.js';
import type { AgentResult } from '../result.js';
import type { Scenario } from '../scenarios/load.js';
import { builtinEngine } from './builtin-engine.js';
import { createDifyEngine, type DifyEngineOptions } from './dify/dify-engine.js';
import type { AgentEngine, EngineRunOptions, EngineRunRequest } from './engine.js';
import { createOpenAiAgentsEngine, type OpenAiAgentsEngineOptions } from './openai-agents/openai-agents-engine.js';

/** Every engine this process runs scenarios on, picked by each scenario's `engine.type`. */
export interface AgentEngines {
  get(scenario: Scenario): AgentEngine;
  /** The engine's pre-run check of the scenario and of what the run asks (throws a 4xx-coded error naming what to fix). */
  assertReady(scenario: Scenario, request?: EngineRunRequest): void;
  /** The scenario through its engine. */
  run(scenario: Scenario, input: string, options: EngineRunOptions): Promise<AgentResult>;
}

interface CreateEnginesOptions {
  dify?: DifyEngineOptions;
  openaiAgents?: OpenAiAgentsEngineOptions;
}

export function createEngines(options: CreateEnginesOptions = {}): AgentEngines {
  const byType = new Map<string, AgentEngine>([
    ['builtin', builtinEngine],
    ['dify', createDifyEngine(options.dify)],
    ['openai-agents', createOpenAiAgentsEngine(options.openaiAgents)],
  ]);
  const get = (scenario: Scenario): AgentEngine => {
    const engine = byType.get(scenario.engine.type);
    if (!engine) throw new ClinAgentError('SCENARIO_INVALID', `Scenario ${scenario.id} (${scenario.sourceFile}) names engine "${scenario.engine.type}", which this server does not run (known: ${[...byType.keys()].join(', ')}).`, { field: 'engine.type' });
    return engine;
  };
  return {
    get,
    assertReady(scenario, request) {
      const engine = get(scenario);
      if (!engine.takesInputs && request?.inputs && Object.keys(request.inputs).length) {
        throw new ClinAgentError('VALIDATION_FAILED', `inputs: scenario ${scenario.id} runs on the ${engine.type} engine, which takes no inputs; inputs are the start-form values of a Dify app. Send the text as input only.`, { field: 'inputs' });
      }
      engine.assertReady?.(scenario, request);
    },
    run: (scenario, input, runOptions) => get(scenario).run(scenario, input, runOptions),
  };
}
