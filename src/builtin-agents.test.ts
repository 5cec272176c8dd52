import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgentRegistry } from './runtime/definitions/index.js';
import { loadScenarios } from './runtime/scenarios/load.js';
import { registerBuiltinTools } from './demo-tools/builtin.js';
import { loadDemoRecords } from './demo-tools/demo-records.js';
import { createToolRegistry } from './core/tools/registry.js';
import { builtinAgentDefinitions } from './builtin-agents.js';

describe('built-in agent definitions', () => {
  it('validate together with the shipped scenarios in one registry, as start-up registers them', () => {
    const tools = createToolRegistry();
    registerBuiltinTools(tools, loadDemoRecords());
    const agents = createAgentRegistry(tools);
    const scenarios = loadScenarios(path.join(process.cwd(), 'scenarios'));
    agents.registerAll([...builtinAgentDefinitions(), ...scenarios]);
    expect(agents.list().map((a) => a.id)).toEqual(['investigate', 'route_intent', 'soft_rule', 'memory_prune', 'memory_distill', 'memory_weekly_report', 'memory_yearly_summary', 'staged_reflexion', 'conversation_summary', ...scenarios.map((s) => s.id)]);
    expect(builtinAgentDefinitions().every((a) => a.sourceFile.startsWith('builtin:'))).toBe(true);
  });
});
