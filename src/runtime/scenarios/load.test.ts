import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../core/tools/registry.js';
import { registerBuiltinTools } from '../../demo-tools/builtin.js';
import { loadDemoRecords } from '../../demo-tools/demo-records.js';
import { createScenarioCatalog } from './catalog.js';
import { loadScenario, loadScenarios } from './load.js';
import { errorOf } from '../../testing/error-of.js';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-scn-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(dir, name), body);
  return dir;
}

describe('scenario loading', () => {
  it('loads the shipped scenarios with their documents and known tools', () => {
    const scenarios = loadScenarios(path.join(process.cwd(), 'scenarios'));
    expect(scenarios.map((s) => s.id).sort()).toEqual(['data-completeness', 'protocol-qa']);
    const qa = scenarios.find((s) => s.id === 'protocol-qa')!;
    expect(qa.rag).toEqual({ enabled: true, collection: 'protocol-qa', topK: 5, maxContextTokens: 3000 });
    expect(qa.output.name).toBe('qa_answer');
    expect(qa.documents[0]).toMatch(/DEMO-HTN-01-protocol\.md$/);
    const tools = createToolRegistry();
    registerBuiltinTools(tools, loadDemoRecords());
    expect(() => createScenarioCatalog(scenarios, tools)).not.toThrow();
  });

  it('reads YAML and JSON alike, with defaults filled', () => {
    const dir = folder({ 'a.json': JSON.stringify({ id: 'a', name: 'A', system_prompt: 'x' }) });
    const scenario = loadScenario(path.join(dir, 'a.json'));
    expect(scenario).toMatchObject({ id: 'a', instructions: 'x', tools: [], output: { name: 'text' }, stop: { maxToolRounds: 4 }, decision: { mode: 'native' }, engine: { type: 'builtin' }, rag: { enabled: false, topK: 5 } });
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

  it('compiles decision and stop blocks into the definition', () => {
    const dir = folder({
      'j.yaml': 'id: j\nname: J\nsystem_prompt: p\ndecision: { mode: json, actions: [use_tool, respond, ask], tool_action: use_tool, wait_on: { ask: answer } }\nstop: { max_rounds: 6, token_budget: 9000, error_breaker: 2 }\nmax_tool_rounds: 3\n',
    });
    const scenario = loadScenario(path.join(dir, 'j.yaml'));
    expect(scenario.decision).toEqual({ mode: 'json', actions: ['use_tool', 'respond', 'ask'], toolAction: 'use_tool', waitOn: { ask: 'answer' } });
    expect(scenario.stop).toEqual({ maxRounds: 6, tokenBudget: 9000, errorBreaker: 2, maxToolRounds: 3 });
  });

  it('names every bad decision and stop field with what is allowed', () => {
    const dir = folder({
      'd.yaml': 'id: d\nname: D\nsystem_prompt: p\ndecision: { mode: json, tool_action: call, wait_on: { later: answer } }\nstop: { max_rounds: 0 }\n',
      'n.yaml': 'id: n\nname: N\nsystem_prompt: p\ndecision: { mode: native, actions: [respond] }\n',
      'w.yaml': 'id: w\nname: W\nsystem_prompt: p\ndecision: { mode: json, actions: [use_tool, respond], wait_on: { use_tool: approval } }\n',
      'v.yaml': 'id: v\nname: V\nsystem_prompt: p\ndecision: { mode: json, actions: [use_tool, respond], wait_on: { respond: maybe } }\n',
    });
    const d = errorOf(() => loadScenario(path.join(dir, 'd.yaml'))).message;
    expect(d).toMatch(/^- decision\.actions: required with mode json/m);
    expect(d).toMatch(/^- decision\.tool_action: must be one of actions/m);
    expect(d).toMatch(/^- decision\.wait_on\.later: must be one of actions/m);
    expect(d).toMatch(/^- stop\.max_rounds: must be at least 1/m);
    expect(errorOf(() => loadScenario(path.join(dir, 'n.yaml'))).message).toMatch(/^- decision\.actions: applies only to mode json/m);
    const w = errorOf(() => loadScenario(path.join(dir, 'w.yaml'))).message;
    expect(w).toMatch(/^- decision\.wait_on\.use_tool: the tool action runs a tool/m);
    expect(errorOf(() => loadScenario(path.join(dir, 'v.yaml'))).message).toMatch(/^- decision\.wait_on\.respond: must be answer or approval/m);
  });

  it('loads a Dify scenario: no prompt of ours, the key named by a DIFY_ variable', () => {
    const dir = folder({ 'app.yaml': 'id: my-dify-app\nname: My app\ndescription: An app on Dify\nengine:\n  type: dify\n  base_url: https://dify.example.org/v1/\n  api_key_env: DIFY_MY_APP_KEY\n  app_mode: agent\n' });
    const scenario = loadScenario(path.join(dir, 'app.yaml'));
    expect(scenario).toMatchObject({ id: 'my-dify-app', instructions: '', tools: [], rag: { enabled: false }, documents: [] });
    expect(scenario.engine).toEqual({ type: 'dify', baseUrl: 'https://dify.example.org/v1', apiKeyEnv: 'DIFY_MY_APP_KEY', appMode: 'agent', inputs: {} });
    const chat = folder({ 'c.yaml': 'id: c\nname: C\nengine: { type: dify, base_url: "http://127.0.0.1:5001/v1", api_key_env: DIFY_C }\n' });
    expect(loadScenario(path.join(chat, 'c.yaml'), { difyAllowedHosts: ['127.0.0.1'] }).engine).toMatchObject({ appMode: 'chat', baseUrl: 'http://127.0.0.1:5001/v1' });
  });

  it('reads the start-form inputs, and the input variable and output of workflow and completion apps', () => {
    const dir = folder({
      'w.yaml': 'id: w\nname: W\nengine: { type: dify, base_url: "https://d.example.org/v1", api_key_env: DIFY_W, app_mode: workflow, input_variable: question, output_key: answer, inputs: { site: S01, visit: 2, fasting: true } }\n',
      'c.yaml': 'id: c\nname: C\nengine: { type: dify, base_url: "https://d.example.org/v1", api_key_env: DIFY_C, app_mode: completion }\n',
    });
    expect(loadScenario(path.join(dir, 'w.yaml')).engine).toEqual({ type: 'dify', baseUrl: 'https://d.example.org/v1', apiKeyEnv: 'DIFY_W', appMode: 'workflow', inputs: { site: 'S01', visit: 2, fasting: true }, inputVariable: 'question', outputKey: 'answer' });
    expect(loadScenario(path.join(dir, 'c.yaml')).engine).toMatchObject({ appMode: 'completion', inputVariable: 'query', inputs: {} });
  });

  it('names what a workflow needs, and inputs that are not start-form values', () => {
    const dir = folder({
      'w.yaml': 'id: w\nname: W\nengine: { type: dify, base_url: "https://d.example.org/v1", api_key_env: DIFY_W, app_mode: workflow, inputs: { "2bad": x, nested: { a: 1 } } }\n',
      'q.yaml': 'id: q\nname: Q\nengine: { type: dify, base_url: "https://d.example.org/v1", api_key_env: DIFY_Q, app_mode: completion, inputs: { query: fixed }, output_key: answer }\n',
    });
    const w = errorOf(() => loadScenario(path.join(dir, 'w.yaml'))).message;
    expect(w).toMatch(/^- engine\.input_variable: required with app_mode workflow/m);
    expect(w).toMatch(/^- engine\.output_key: required with app_mode workflow/m);
    expect(w).toMatch(/^- engine\.inputs\.2bad: must be a Dify variable name/m);
    expect(w).toMatch(/^- engine\.inputs\.nested: must be text/m);
    const q = errorOf(() => loadScenario(path.join(dir, 'q.yaml'))).message;
    expect(q).toMatch(/^- engine\.inputs\.query: is where each run's text goes/m);
    expect(q).toMatch(/^- engine\.output_key: applies only to app_mode workflow/m);
  });

  it('reports every problem of a file in one pass: schema, cross-field, documents, Dify URL and tools (one start, not three)', () => {
    const dir = folder({
      'many.yaml': 'id: Many Problems\nname: M\nsystem_prompt: p\nrag: { enabled: true }\noutput_type: poem\ndocuments: [missing.md]\ntools: [calculate_rate, launch_rocket]\nstop: { max_rounds: 0 }\nsurplus: 1\n',
      'dify.yaml': 'id: d\nname: D\nsystem_prompt: ours\nengine: { type: dify, base_url: "http://169.254.169.254/v1", api_key_env: LLM_API_KEY, app_mode: chatflow }\n',
    });
    const tools = createToolRegistry();
    registerBuiltinTools(tools, loadDemoRecords());
    const toolNames = new Set(tools.list().map((t) => t.name));
    const many = errorOf(() => loadScenario(path.join(dir, 'many.yaml'), { toolNames }));
    expect(many.details.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^id: must be 1-64 lowercase/),
        expect.stringMatching(/^rag\.collection: required when rag\.enabled is true/),
        expect.stringMatching(/^output_type: Unknown output type "poem"/),
        expect.stringMatching(/^stop\.max_rounds: must be at least 1/),
        expect.stringContaining('surplus'),
        expect.stringMatching(/^documents\.0: file .*missing\.md does not exist/),
        expect.stringMatching(/^tools\.1: "launch_rocket" is not a registered tool/),
      ]),
    );
    expect(many.message).not.toContain('"calculate_rate" is not');
    const dify = errorOf(() => loadScenario(path.join(dir, 'dify.yaml'))).message;
    expect(dify).toMatch(/^- engine\.api_key_env: must be the name of an environment variable starting with DIFY_/m);
    expect(dify).toMatch(/^- engine\.app_mode: must be chat/m);
    expect(dify).toMatch(/^- system_prompt: not allowed with engine\.type dify/m);
    expect(dify).toMatch(/^- engine\.base_url: names 169\.254\.169\.254/m);
  });

  it('refuses our prompt, tools, RAG and output type on a Dify scenario, saying the app has its own', () => {
    const dir = folder({
      'x.yaml': 'id: x\nname: X\nsystem_prompt: p\ntools: [calculate_rate]\nrag: { enabled: true, collection: c }\noutput_type: qa_answer\nengine: { type: dify, base_url: "https://d.example.org/v1", api_key_env: DIFY_X }\n',
    });
    const message = errorOf(() => loadScenario(path.join(dir, 'x.yaml'))).message;
    for (const field of ['system_prompt', 'tools', 'rag', 'output_type']) expect(message).toMatch(new RegExp(`^- ${field}: not allowed with engine.type dify: the Dify app has its own`, 'm'));
  });

  it('accepts only DIFY_ key variables, so a file can never send DATABASE_URL or AUDIT_KEY to an app', () => {
    const files: Record<string, string> = {};
    for (const name of ['DATABASE_URL', 'AUDIT_KEY', 'LLM_API_KEY', 'dify_lower', 'DIFY_']) files[`${name.toLowerCase()}.yaml`] = `id: k\nname: K\nengine: { type: dify, base_url: "https://d.example.org/v1", api_key_env: ${name} }\n`;
    const dir = folder(files);
    for (const file of Object.keys(files)) {
      expect(errorOf(() => loadScenario(path.join(dir, file))).message).toMatch(/^- engine\.api_key_env: must be the name of an environment variable starting with DIFY_/m);
    }
    const missing = folder({ 'm.yaml': 'id: m\nname: M\nengine: { type: dify }\n' });
    const message = errorOf(() => loadScenario(path.join(missing, 'm.yaml'))).message;
    expect(message).toMatch(/^- engine\.base_url: required with type dify/m);
    expect(message).toMatch(/^- engine\.api_key_env: required with type dify/m);
  });

  it('sends the key over https only, unless the host is loopback or the server allows http', () => {
    const dir = folder({
      'h.yaml': 'id: h\nname: H\nengine: { type: dify, base_url: "http://dify.lab.example.org/v1", api_key_env: DIFY_H }\n',
      'f.yaml': 'id: f\nname: F\nengine: { type: dify, base_url: "ftp://dify.example.org/v1", api_key_env: DIFY_F }\n',
      'u.yaml': 'id: u\nname: U\nengine: { type: dify, base_url: "https://me:pw@dify.example.org/v1", api_key_env: DIFY_U }\n',
    });
    expect(errorOf(() => loadScenario(path.join(dir, 'h.yaml'))).message).toMatch(/^- engine\.base_url: must be https.*DIFY_ALLOW_HTTP=true/m);
    expect(loadScenario(path.join(dir, 'h.yaml'), { difyAllowHttp: true }).engine).toMatchObject({ baseUrl: 'http://dify.lab.example.org/v1' });
    expect(errorOf(() => loadScenario(path.join(dir, 'f.yaml'), { difyAllowHttp: true })).message).toMatch(/^- engine\.base_url: must be an https URL, got ftp:/m);
    expect(errorOf(() => loadScenario(path.join(dir, 'u.yaml'))).message).toMatch(/^- engine\.base_url: must not carry a user name or password/m);
  });

  it('refuses a base URL on a link-local, loopback or private host unless DIFY_ALLOWED_HOSTS names it (issue 32)', () => {
    const hosts: Record<string, RegExp> = {
      'https://169.254.169.254/v1': /169\.254\.169\.254, a link-local address .*DIFY_ALLOWED_HOSTS/,
      'https://[::ffff:169.254.169.254]/v1': /link-local address/,
      'https://10.0.0.5/v1': /a private address/,
      'https://192.168.1.20/v1': /a private address/,
      'https://[fd00::5]/v1': /a private \(unique local\) address/,
      'http://127.0.0.1:5001/v1': /a loopback address/,
      // Numeric forms a URL parser turns into 127.0.0.1.
      'https://2130706433/v1': /a loopback address/,
      'https://0x7f000001/v1': /a loopback address/,
      'https://localhost/v1': /this machine \(localhost\)/,
      'https://metadata.google.internal/v1': /a local-network name/,
    };
    const files = Object.fromEntries(Object.keys(hosts).map((url, i) => [`s${i}.yaml`, `id: s${i}\nname: S\nengine: { type: dify, base_url: "${url}", api_key_env: DIFY_S }\n`]));
    const dir = folder(files);
    Object.entries(hosts).forEach(([url, why], i) => {
      expect(errorOf(() => loadScenario(path.join(dir, `s${i}.yaml`))).message).toMatch(new RegExp(`^- engine\\.base_url: names .*${why.source}`, 'm'));
    });
    // Named by the administrator, a host on the lab network or this machine is used as written.
    expect(loadScenario(path.join(dir, 's2.yaml'), { difyAllowedHosts: ['10.0.0.5'] }).engine).toMatchObject({ baseUrl: 'https://10.0.0.5/v1' });
    expect(loadScenario(path.join(dir, 's4.yaml'), { difyAllowedHosts: ['fd00::5'] }).engine).toMatchObject({ baseUrl: 'https://[fd00::5]/v1' });
    expect(loadScenario(path.join(dir, 's5.yaml'), { difyAllowedHosts: ['127.0.0.1'] }).engine).toMatchObject({ baseUrl: 'http://127.0.0.1:5001/v1' });
    // Naming one host allows that host only.
    expect(errorOf(() => loadScenario(path.join(dir, 's0.yaml'), { difyAllowedHosts: ['10.0.0.5'] })).message).toMatch(/link-local/);
    // A public host needs no allowance.
    expect(loadScenario(path.join(folder({ 'p.yaml': 'id: p\nname: P\nengine: { type: dify, base_url: "https://93.184.215.14/v1", api_key_env: DIFY_P }\n' }), 'p.yaml')).engine).toMatchObject({ baseUrl: 'https://93.184.215.14/v1' });
  });

  it('keeps Dify settings off built-in scenarios and still requires their prompt', () => {
    const dir = folder({ 'b.yaml': 'id: b\nname: B\nengine: { type: builtin, api_key_env: DIFY_B }\n', 'e.yaml': 'id: e\nname: E\nengine: { type: langgraph }\nsystem_prompt: p\n' });
    const message = errorOf(() => loadScenario(path.join(dir, 'b.yaml'))).message;
    expect(message).toMatch(/^- engine\.api_key_env: applies only to type dify/m);
    expect(message).toMatch(/^- system_prompt: required/m);
    expect(errorOf(() => loadScenario(path.join(dir, 'e.yaml'))).message).toMatch(/^- engine\.type: must be builtin .* or dify/m);
  });
});
