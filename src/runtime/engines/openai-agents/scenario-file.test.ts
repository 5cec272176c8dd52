import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../testing/error-of.js';
import { loadScenario } from '../../scenarios/load.js';
import { maxTurnsOf } from './sdk-errors.js';

function file(name: string, body: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-oa-scn-'));
  writeFileSync(path.join(dir, name), body);
  return path.join(dir, name);
}

describe('a scenario file with engine.type openai-agents', () => {
  it('loads with its prompt, tools and output type, and takes its max turns from stop.max_rounds or max_tool_rounds', () => {
    const scenario = loadScenario(file('a.yaml', 'id: a\nname: A\nengine: { type: openai-agents }\nsystem_prompt: Be brief.\ntools: [calculate_sample_size]\noutput_type: text\nmax_tool_rounds: 2\n'));
    expect(scenario).toMatchObject({ engine: { type: 'openai-agents' }, instructions: 'Be brief.', tools: ['calculate_sample_size'], stop: { maxToolRounds: 2 } });
    expect(maxTurnsOf(scenario)).toBe(3);
    expect(maxTurnsOf(loadScenario(file('b.yaml', 'id: b\nname: B\nengine: { type: openai-agents }\nsystem_prompt: p\nstop: { max_rounds: 7 }\n')))).toBe(7);
    expect(maxTurnsOf(loadScenario(file('c.yaml', 'id: c\nname: C\nengine: { type: openai-agents }\nsystem_prompt: p\n')))).toBe(5);
  });

  it('refuses what the SDK loop cannot honour, naming each field, instead of ignoring it', () => {
    const body = 'id: d\nname: D\nengine: { type: openai-agents, base_url: "https://x.example.org/v1" }\nrag: { enabled: false }\ndocuments: [a.md]\ndecision: { mode: native }\nstop: { max_rounds: 3, token_budget: 1000, attempts: 2 }\n';
    const message = errorOf(() => loadScenario(file('d.yaml', body))).message;
    expect(message).toMatch(/^- engine\.base_url: applies only to type dify/m);
    expect(message).toMatch(/^- system_prompt: required/m);
    for (const field of ['rag', 'documents', 'decision']) expect(message).toMatch(new RegExp(`^- ${field}: not supported with engine\\.type openai-agents`, 'm'));
    expect(message).toMatch(/^- stop\.token_budget: not supported with engine\.type openai-agents: only stop\.max_rounds/m);
    expect(message).toMatch(/^- stop\.attempts: not supported/m);
    expect(message).not.toMatch(/stop\.max_rounds: not supported/);
  });

  it('names the new engine among the engine types a file may give', () => {
    expect(errorOf(() => loadScenario(file('e.yaml', 'id: e\nname: E\nengine: { type: langgraph }\nsystem_prompt: p\n'))).message).toMatch(/^- engine\.type: must be builtin .*, openai-agents .* or dify/m);
  });
});
