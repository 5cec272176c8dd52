import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { createToolRegistry } from '../../core/tools/registry.js';
import { registerBuiltinTools } from '../tools/builtin.js';
import { loadDemoRecords } from '../tools/demo-records.js';
import { createScenarioCatalog } from './catalog.js';
import { loadScenario, loadScenarios } from './load.js';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-scn-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(dir, name), body);
  return dir;
}

function errorOf(fn: () => unknown): ClinAgentError {
  try {
    fn();
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('scenario loading', () => {
  it('loads the shipped scenarios with their documents and known tools', () => {
    const scenarios = loadScenarios(path.join(process.cwd(), 'scenarios'));
    expect(scenarios.map((s) => s.id).sort()).toEqual(['data-completeness', 'protocol-qa']);
    const qa = scenarios.find((s) => s.id === 'protocol-qa')!;
    expect(qa.rag).toEqual({ enabled: true, collection: 'protocol-qa', topK: 5, maxContextTokens: 3000 });
    expect(qa.outputType.name).toBe('qa_answer');
    expect(qa.documents[0]).toMatch(/DEMO-HTN-01-protocol\.md$/);
    const tools = createToolRegistry();
    registerBuiltinTools(tools, loadDemoRecords());
    expect(() => createScenarioCatalog(scenarios, tools)).not.toThrow();
  });

  it('reads YAML and JSON alike, with defaults filled', () => {
    const dir = folder({ 'a.json': JSON.stringify({ id: 'a', name: 'A', system_prompt: 'x' }) });
    const scenario = loadScenario(path.join(dir, 'a.json'));
    expect(scenario).toMatchObject({ id: 'a', tools: [], outputType: { name: 'text' }, maxToolRounds: 4, rag: { enabled: false, topK: 5 } });
  });

  it('rejects an invalid file with the file, every bad field and the reason', () => {
    const dir = folder({ 'bad.yaml': 'id: Bad Id\nname: x\nsystem_prompt: ""\nrag: { enabled: true, top_k: 99 }\nunknown_key: 1\n' });
    const error = errorOf(() => loadScenario(path.join(dir, 'bad.yaml')));
    expect(error.code).toBe('SCENARIO_INVALID');
    expect(error.message).toContain('bad.yaml');
    expect(error.message).toMatch(/^- id: must be 1-64 lowercase/m);
    expect(error.message).toMatch(/^- system_prompt: must not be empty/m);
    expect(error.message).toMatch(/^- rag\.top_k: /m);
    expect(error.message).toContain('unknown_key');
  });

  it('requires a collection when RAG is on, a known output type and existing documents', () => {
    const dir = folder({ 'r.yaml': 'id: r\nname: r\nsystem_prompt: p\nrag: { enabled: true }\noutput_type: poem\ndocuments: [missing.md]\n' });
    const error = errorOf(() => loadScenario(path.join(dir, 'r.yaml')));
    expect(error.message).toContain('rag.collection: required when rag.enabled is true');
    expect(error.message).toContain('output_type: Unknown output type "poem"');
    expect(error.message).toMatch(/documents\.0: file .*missing\.md does not exist/);
  });

  it('reports unreadable YAML and duplicate ids across a folder', () => {
    const dir = folder({ 'one.yaml': 'id: same\nname: one\nsystem_prompt: p\n', 'two.yml': 'id: same\nname: two\nsystem_prompt: p\n', 'three.yaml': 'id: [unclosed\n' });
    const error = errorOf(() => loadScenarios(dir));
    expect(error.message).toContain('three.yaml: cannot be read as YAML');
    expect(error.message).toMatch(/two\.yml: id "same" is already used by .*one\.yaml/);
  });

  it('refuses scenarios that name tools nobody registered', () => {
    const dir = folder({ 't.yaml': 'id: t\nname: t\nsystem_prompt: p\ntools: [calculate_rate, launch_rocket]\n' });
    const tools = createToolRegistry();
    registerBuiltinTools(tools, loadDemoRecords());
    const error = errorOf(() => createScenarioCatalog(loadScenarios(dir), tools));
    expect(error.message).toContain('"launch_rocket" is not a registered tool');
    expect(error.message).not.toContain('"calculate_rate" is not');
  });
});
