import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRegistry } from '../../core/tools/registry.js';
import type { AgentDefinition } from './agent-definition.js';
import { createAgentRegistry } from './registry.js';
import { errorOf } from '../../testing/error-of.js';

function tools() {
  const registry = createToolRegistry();
  for (const name of ['lookup_lesion_history', 'calculate_rate']) registry.register({ name, description: name, schema: z.object({}), run: () => ({}) });
  return registry;
}

/** A consult-like agent: JSON decisions, one tool, waits for the patient's answer. */
function consult(overrides: Partial<AgentDefinition> = {}): AgentDefinition {
  return {
    id: 'consult',
    name: 'Consult',
    description: 'Asks, looks up, diagnoses.',
    sourceFile: 'agents/consult.yaml',
    instructions: 'You are a consultant.',
    tools: ['lookup_lesion_history'],
    decision: { mode: 'json', actions: ['use_tool', 'ask', 'diagnose'], toolAction: 'use_tool', waitOn: { ask: 'answer' } },
    output: { name: 'text' },
    stop: { maxRounds: 5, errorBreaker: 2 },
    history: { strategy: 'full' },
    model: {},
    engine: { type: 'builtin' },
    ...overrides,
  };
}

describe('agent registry', () => {
  it('registers a valid definition and finds it by id; an unknown id is NOT_FOUND naming the known ones', () => {
    const agents = createAgentRegistry(tools());
    agents.register(consult());
    agents.register(consult({ id: 'judge', sourceFile: 'builtin:judge', decision: { mode: 'native' }, stop: { maxToolRounds: 0 } }));
    expect(agents.get('consult').sourceFile).toBe('agents/consult.yaml');
    expect(agents.has('judge')).toBe(true);
    expect(agents.list().map((a) => a.id)).toEqual(['consult', 'judge']);
    const missing = errorOf(() => agents.get('protocol'));
    expect(missing).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(missing.message).toBe('Unknown agent "protocol". Known agents: consult, judge.');
  });

  it('refuses a tool the registry does not have, naming the file, the field and the known tools', () => {
    const error = errorOf(() => createAgentRegistry(tools()).register(consult({ tools: ['lookup_lesion_history', 'order_biopsy'] })));
    expect(error).toMatchObject({ code: 'AGENT_INVALID', status: 422 });
    expect(error.message).toContain('agents/consult.yaml: tools.1: "order_biopsy" is not a registered tool (known: lookup_lesion_history, calculate_rate)');
  });

  it('refuses a json decision whose tool action or waiting actions are not among its actions, or that waits on the tool action', () => {
    const notAnAction = errorOf(() => createAgentRegistry(tools()).register(consult({ decision: { mode: 'json', actions: ['ask', 'diagnose'], toolAction: 'use_tool', waitOn: { respond: 'answer' } } })));
    expect(notAnAction.message).toContain('agents/consult.yaml: decision.toolAction: "use_tool" is not one of decision.actions (ask, diagnose)');
    expect(notAnAction.message).toContain('agents/consult.yaml: decision.waitOn.respond: "respond" is not one of decision.actions (ask, diagnose)');

    const onTool = errorOf(() => createAgentRegistry(tools()).register(consult({ decision: { mode: 'json', actions: ['use_tool', 'ask'], toolAction: 'use_tool', waitOn: { use_tool: 'approval', ask: 'reply' as never } } })));
    expect(onTool.message).toContain('decision.waitOn.use_tool: the tool action cannot wait for a person; name one of the other actions (ask)');
    expect(onTool.message).toContain('decision.waitOn.ask: waits for "reply"; allowed: answer, approval');

    // Without tools the tool action is never used, so an agent that only asks and answers need not list it.
    const askOnly = consult({ tools: [], decision: { mode: 'json', actions: ['ask', 'respond'], toolAction: 'use_tool', waitOn: { ask: 'answer' } } });
    expect(createAgentRegistry(tools()).register(askOnly)).toBeUndefined();
  });

  it('refuses limits that can never be reached or never let a turn run, each named', () => {
    const error = errorOf(() => createAgentRegistry(tools()).register(consult({ stop: { maxRounds: 0, tokenBudget: -100, reasoningBudget: 1.5, errorBreaker: 2, attempts: 0, maxToolRounds: -1 } })));
    expect(error.details.problems).toEqual([
      'agents/consult.yaml: stop.maxRounds: must be a whole number of at least 1, got 0; leave it out for no limit',
      'agents/consult.yaml: stop.maxToolRounds: must be a whole number of at least 0, got -1; leave it out for no limit',
      'agents/consult.yaml: stop.tokenBudget: must be a whole number of at least 1, got -100; leave it out for no limit',
      'agents/consult.yaml: stop.reasoningBudget: must be a whole number of at least 1, got 1.5; leave it out for no limit',
      'agents/consult.yaml: stop.attempts: must be a whole number of at least 1, got 0; leave it out for no limit',
    ]);
  });

  it('refuses two stages with one id', () => {
    const stage = (id: string) => ({ id, name: id, instructions: `Collect ${id}.`, transition: 'user_confirm' as const });
    const error = errorOf(() => createAgentRegistry(tools()).register(consult({ stages: [stage('scope'), stage('design'), stage('scope')] })));
    expect(error.message).toContain('agents/consult.yaml: stages.2.id: "scope" is already the id of an earlier stage; stage ids must be unique');
  });

  it('refuses a second agent with the same id, naming both sources', () => {
    const agents = createAgentRegistry(tools());
    agents.register(consult());
    const error = errorOf(() => agents.register(consult({ sourceFile: 'builtin:src/agents/consult/definition.ts' })));
    expect(error).toMatchObject({ code: 'AGENT_INVALID', details: { otherSourceFile: 'agents/consult.yaml' } });
    expect(error.message).toBe('builtin:src/agents/consult/definition.ts: id: "consult" is already used by agents/consult.yaml; agent ids must be unique.');
  });

  it('at start-up registers all or none, listing the problems of every definition at once', () => {
    const agents = createAgentRegistry(tools());
    const error = errorOf(() =>
      agents.registerAll([consult(), consult({ sourceFile: 'agents/copy.yaml' }), consult({ id: 'other', sourceFile: 'agents/other.yaml', tools: ['ghost'] })]),
    );
    expect(error.code).toBe('AGENT_INVALID');
    expect(error.message).toMatch(/^Agent definitions are not valid, so the server cannot start:/);
    expect(error.details.problems).toEqual([
      'agents/copy.yaml: id: "consult" is already used by agents/consult.yaml; agent ids must be unique',
      'agents/other.yaml: tools.0: "ghost" is not a registered tool (known: lookup_lesion_history, calculate_rate)',
    ]);
    expect(agents.list()).toEqual([]);
  });
});
