import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmGateway } from '../../core/llm/gateway.js';
import { createToolRegistry } from '../../core/tools/registry.js';
import { createAgentRegistry } from '../definitions/registry.js';
import { UNTRACED } from '../loop/index.js';
import { withLeadingSystemMessage } from '../../testing/registry-variant.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { StagedAgentConfig } from './config.js';
import { REFLEXION_DEFINITION } from './reflexion.js';
import { completeStage } from './stage-steps.js';

const REGISTERED = 'The reflexion check as the registry holds it.';

const config = StagedAgentConfig.parse({
  agentId: 'registry_check',
  agentName: 'Registry check',
  version: 1,
  baseSystemPrompt: 'Collect the PICO.',
  stages: [{ stageId: 'pico', stageName: 'PICO', contextField: 'pico', instruction: 'Collect the PICO.', extractionSchema: { type: 'object', properties: { population: { type: 'string' } } }, completionCriteria: 'All four PICO elements are specific.', nextStageId: null, transitionMode: 'user_confirm' }],
  reflexionRules: [{ ruleId: 'population_specific', ruleName: 'Population specific', triggerTiming: 'on_complete', ruleType: 'prompt_based', severity: 'warning', failureAction: 'warn', message: 'The population is too vague' }],
});

/** A staged agent's step checks its prompt-based rules with the reflexion definition the agent registry holds. */
describe('stage steps resolve the reflexion definition from the agent registry', () => {
  let model: ScriptedModel;

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: { reply: '{"passed": true, "issues": [], "suggestions": []}' } });
  });

  afterAll(async () => {
    await model?.close();
  });

  it('completing a stage sends the instructions of the registered reflexion definition', async () => {
    const agents = createAgentRegistry(createToolRegistry());
    agents.register(withLeadingSystemMessage(REFLEXION_DEFINITION, REGISTERED));
    const llm = createLlmGateway({ baseUrl: model.baseURL, model: 'scripted-model', timeoutMs: 5000, maxRetries: 0 });
    const state = { agentId: 'registry_check', title: 'PICO', currentStage: 'pico', finished: false, completedStages: [], context: { pico: { population: 'adults aged 40-75' } }, history: [], traceIds: [], updatedAt: '2026-11-16T09:00:00.000Z' };
    const { result } = await completeStage({ llm, tools: createToolRegistry(), validators: {}, agents }, { config, configVersion: 1, state, conversationId: 'c1', trace: UNTRACED });
    expect(result.success).toBe(true);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.body.messages[0]).toMatchObject({ role: 'system', content: REGISTERED });
  });
});
