import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmGateway } from '../../core/llm/gateway.js';
import { createToolRegistry } from '../../core/tools/registry.js';
import { createAgentRegistry } from '../definitions/registry.js';
import { UNTRACED } from '../loop/index.js';
import { withLeadingSystemMessage } from '../../testing/registry-variant.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { StagedAgentConfig } from './config.js';
import { REFLEXION_DEFINITION } from './reflexion.js';
import { stagedAgentDefinition } from './stage-definition.js';
import { completeStage, handleMessage } from './stage-steps.js';

const REGISTERED = 'The reflexion check as the registry holds it.';

const config = StagedAgentConfig.parse({
  agentId: 'registry_check',
  agentName: 'Registry check',
  version: 1,
  baseSystemPrompt: 'Collect the PICO.',
  stages: [{ stageId: 'pico', stageName: 'PICO', contextField: 'pico', instruction: 'Collect the PICO.', extractionSchema: { type: 'object', properties: { population: { type: 'string' } } }, completionCriteria: 'All four PICO elements are specific.', nextStageId: null, transitionMode: 'user_confirm' }],
  reflexionRules: [{ ruleId: 'population_specific', ruleName: 'Population specific', triggerTiming: 'on_complete', ruleType: 'prompt_based', severity: 'warning', failureAction: 'warn', message: 'The population is too vague' }],
});

/** A staged agent's step runs its turn and checks its prompt-based rules with the definitions the agent registry holds. */
describe('stage steps resolve the stage turn and the reflexion definition from the agent registry', () => {
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

  it('a stage turn runs the staged agent the registry holds, and not one it does not', async () => {
    const state = { agentId: 'registry_check', title: 'PICO', currentStage: 'pico', finished: false, completedStages: [], context: { pico: {} }, history: [], traceIds: [], updatedAt: '2026-11-16T09:00:00.000Z' };
    const llm = createLlmGateway({ baseUrl: model.baseURL, model: 'scripted-model', timeoutMs: 5000, maxRetries: 0 });
    const turn = (agents: ReturnType<typeof createAgentRegistry>) => handleMessage({ llm, tools: createToolRegistry(), validators: {}, agents }, { config, configVersion: 1, state, conversationId: 'c1', trace: UNTRACED, message: 'Adults with hypertension.' });

    const registered = createAgentRegistry(createToolRegistry());
    registered.register(withLeadingSystemMessage(stagedAgentDefinition(config, 'registry_check.v1.yaml'), 'The staged agent as the registry holds it.'));
    const before = model.requests.length;
    await turn(registered);
    expect(model.requests[before]!.body.messages[0]).toMatchObject({ role: 'system', content: 'The staged agent as the registry holds it.' });

    await expect(turn(createAgentRegistry(createToolRegistry()))).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('"registry_check" is not registered') });
    // An agent of that id that is not a staged one (a scenario, say) is not run as one.
    const notStaged = createAgentRegistry(createToolRegistry());
    notStaged.register({ ...REFLEXION_DEFINITION, id: 'registry_check' });
    await expect(turn(notStaged)).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('is not a staged agent') });
    expect(model.requests).toHaveLength(before + 1);
  });
});
