import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../testing/scripted-model.js';
import { buildTestContext } from '../testing/test-context.js';
import { ALL_TRACES } from '../core/trace/store.js';
import { MAX_ANSWER_CHARS } from './loop/index.js';
import { runAgent, type AgentDeps } from './run-agent.js';
import { loadScenario } from './scenarios/load.js';

type TestContext = Awaited<ReturnType<typeof buildTestContext>>;

function writeScenario(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, body);
  return file;
}

describe('runAgent against the scripted model', () => {
  let model: ScriptedModel;
  let ctx: TestContext;
  let deps: AgentDeps;
  let dir: string;

  beforeAll(async () => {
    model = await startScriptedModel();
    // Vector search needs pgvector, which the CI PostgreSQL lacks: agent runs are proven on PGlite.
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    deps = { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag };
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-scenarios-'));
    await ctx.rag.ingestDocument({
      documentId: 'alpha-protocol',
      scenarioId: 'alpha',
      sourceFile: 'alpha-protocol.md',
      collection: 'shared-docs',
      text: 'Alpha trial visit schedule: the week 4 visit has a window of plus or minus 3 days. Blood pressure is measured three times.',
    });
    await ctx.rag.ingestDocument({
      documentId: 'beta-protocol',
      scenarioId: 'beta',
      sourceFile: 'beta-protocol.md',
      collection: 'shared-docs',
      text: 'Beta trial visit schedule: the week 4 visit has a window of plus or minus 7 days. Blood pressure is measured twice.',
    });
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  const ragScenario = (id: string, outputType = 'qa_answer') =>
    loadScenario(
      writeScenario(
        dir,
        `${id}.yaml`,
        `id: ${id}\nname: ${id}\nsystem_prompt: Answer from the references.\nrag: { enabled: true, collection: shared-docs, top_k: 5 }\noutput_type: ${outputType}\n`,
      ),
    );

  it("answers with references from the scenario's own documents only, never another scenario's", async () => {
    model.push({ reply: '{"answer": "The window is ±3 days [1].", "citations": ["[1]"], "confidence": "high"}' });
    const result = await runAgent(ragScenario('alpha'), 'What is the window of the week 4 visit in the beta trial?', { context: deps });

    expect(result.status).toBe('success');
    expect(result.answer).toBe('The window is ±3 days [1].');
    expect(result.structuredOutput).toMatchObject({ citations: ['[1]'], confidence: 'high' });
    expect(result.references.length).toBeGreaterThan(0);
    expect(result.references.every((r) => r.scenarioId === 'alpha' && r.documentId === 'alpha-protocol')).toBe(true);
    // The model saw the alpha excerpt, numbered for citation, and nothing of beta.
    const sent = JSON.stringify(model.requests.at(-1)!.body.messages);
    expect(sent).toContain('[1] (alpha-protocol.md, alpha-protocol#0)');
    expect(sent).not.toContain('Beta trial');
  });

  it('limits retrieval to the documents named for the run', async () => {
    model.push({ reply: '{"answer": "none", "citations": [], "confidence": "low"}' });
    const none = await runAgent(ragScenario('beta'), 'week 4 window', { context: deps, documentIds: ['alpha-protocol'] });
    expect(none.status).toBe('success');
    expect(none.references).toEqual([]);

    model.push({ reply: '{"answer": "±7 days", "citations": ["[1]"], "confidence": "high"}' });
    const scoped = await runAgent(ragScenario('beta'), 'week 4 window', { context: deps, documentIds: ['beta-protocol'] });
    expect(scoped.references.map((r) => r.documentId)).toEqual(['beta-protocol']);
  });

  it('records the tool calls of a function-calling run and feeds results back to the model', async () => {
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    model.push(
      { toolCalls: [{ name: 'check_required_fields', arguments: { required_fields: ['consent_date', 'sex'] } }] },
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 58, denominator: 60, label: 'completion' } }, { name: 'no_such_tool', arguments: {} }] },
      {
        reply:
          'Report:\n```json\n{"summary": "2 fields missing", "completion_rate": 0.9667, "issues": [{"record_id": "S004", "field": "consent_date", "problem": "missing"}], "action_items": ["Query S004 consent date"]}\n```',
      },
    );
    const before = model.requests.length;
    const result = await runAgent(scenario, 'Check consent date and sex for all subjects', { context: deps });

    expect(result.status).toBe('success');
    expect(result.toolCalls.map((c) => [c.toolName, c.success])).toEqual([
      ['check_required_fields', true],
      ['calculate_rate', true],
      ['no_such_tool', false],
    ]);
    const check = result.toolCalls[0]!.result as { missing: Array<{ subject_id: string; field: string }> };
    expect(check.missing).toEqual(expect.arrayContaining([expect.objectContaining({ subject_id: 'S004', field: 'consent_date' }), expect.objectContaining({ subject_id: 'S027', field: 'sex' })]));
    expect(result.toolCalls[2]!.error).toContain('is not allowed in scenario data-completeness');
    expect(result.answer).toBe('2 fields missing');
    expect(result.structuredOutput.completion_rate).toBe(0.9667);

    const calls = model.requests.slice(before);
    expect(calls).toHaveLength(3);
    expect(calls[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(scenario.tools);
    const toolMessages = calls[1]!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(toolMessages).toHaveLength(1);
    // Tool output goes back as a data block (core/llm/untrusted-data.ts) around the JSON.
    expect(toolMessages[0].content).toMatch(/^<tool_result>\n[\s\S]*\n<\/tool_result>$/);
    expect(JSON.parse(toolMessages[0].content.slice('<tool_result>'.length, -'</tool_result>'.length)).result.missing_count).toBeGreaterThan(0);

    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace?.status).toBe('success');
    expect(trace?.spans.filter((s) => s.kind === 'tool').map((s) => [s.name, s.status])).toEqual([
      ['check_required_fields', 'success'],
      ['calculate_rate', 'success'],
    ]);
    expect(trace?.spans.filter((s) => s.kind === 'llm')).toHaveLength(3);
    expect(trace?.promptTokens).toBeGreaterThan(0);
  });

  it('stops offering tools after max_tool_rounds so a looping model must answer', async () => {
    const loaded = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    const scenario = { ...loaded, stop: { ...loaded.stop, maxToolRounds: 1 } };
    const report = { summary: 'Half complete.', completion_rate: 0.5, issues: [], action_items: [] };
    // The call in the round without tools is taken as the answer: with no text it is no report, so it is asked for again.
    model.push({ toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 1, denominator: 2 } }] }, { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 1, denominator: 2 } }] }, { reply: JSON.stringify(report) });
    const before = model.requests.length;
    const result = await runAgent(scenario, 'rate?', { context: deps });
    const calls = model.requests.slice(before);
    expect(calls).toHaveLength(3);
    expect(calls[1]!.body.tools).toBeUndefined();
    expect(calls[2]!.body.tools).toBeUndefined();
    expect(result.toolCalls).toHaveLength(1);
    expect(result).toMatchObject({ status: 'success', error: '', structuredOutput: { completion_rate: 0.5 } });
  });

  it('turns a throwing tool or bad arguments into failed tool calls and carries on', async () => {
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    model.push(
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 5, denominator: 2 } }, { name: 'check_required_fields', arguments: '{"required_fields": "not-an-array"}' }] },
      { reply: '{"summary": "could not compute", "completion_rate": 0, "issues": [], "action_items": []}' },
    );
    const result = await runAgent(scenario, 'rate?', { context: deps });
    expect(result.status).toBe('success');
    expect(result.toolCalls.map((c) => c.success)).toEqual([false, false]);
    expect(result.toolCalls[0]!.error).toContain('numerator (5) is larger than denominator (2)');
    expect(result.toolCalls[1]!.error).toContain('required_fields:');
  });

  it('asks again for an answer that is not valid JSON for the output type, and fails, never succeeds with an error, when it stays invalid', async () => {
    const before = model.requests.length;
    model.push({ reply: 'Here is my answer: {"answer": "three times", "citations": [' }, { reply: '{"answer": "Three times [1].", "citations": ["[1]"], "confidence": "high"}' });
    const corrected = await runAgent(ragScenario('alpha-cut'), 'How often is blood pressure measured?', { context: deps });
    expect(corrected).toMatchObject({ status: 'success', error: '', answer: 'Three times [1].', structuredOutput: { confidence: 'high' } });
    expect((model.requests[before + 1]!.body.messages as Array<{ content: string }>).at(-1)!.content).toMatch(/cut off before it closes[\s\S]*Reply with the corrected JSON object only/);

    model.push({ reply: 'I cannot answer in JSON today.' }, { reply: 'Still no JSON.' }, { reply: 'No.' });
    const prose = await runAgent(ragScenario('alpha-prose'), 'How often is blood pressure measured?', { context: deps });
    expect(prose).toMatchObject({ status: 'failed', answer: '', structuredOutput: {}, rawOutput: 'No.' });
    expect(prose.error).toBe('The model gave no usable answer after 3 tries, so none is shown. Try again, or ask in other words.');
    expect((await ctx.trace.get(prose.traceId, ALL_TRACES))?.status).toBe('failed');
  });

  it('asks again for an answer of the wrong shape, an empty one or one too long to show, and never returns them', async () => {
    const good = '{"answer": "Three times [1].", "citations": ["[1]"], "confidence": "high"}';
    for (const bad of ['{"answer": 42, "citations": {"items": 42}, "confidence": 42}', '', `{"answer": "${'Three times. '.repeat(2000)}", "citations": [], "confidence": "low"}`]) {
      const before = model.requests.length;
      model.push({ reply: bad }, { reply: good });
      const result = await runAgent(ragScenario('alpha-shape'), 'How often is blood pressure measured?', { context: deps });
      expect(result, bad.slice(0, 40)).toMatchObject({ status: 'success', error: '', answer: 'Three times [1].' });
      expect(model.requests.length - before).toBe(2);
    }
    model.push({ reply: '' }, { reply: ' ' }, { reply: '' });
    const empty = await runAgent(loadScenario(writeScenario(dir, 'plain-empty.yaml', 'id: plain-empty\nname: plain\nsystem_prompt: Answer briefly.\n')), 'Explain the visit schedule.', { context: deps });
    expect(empty).toMatchObject({ status: 'failed', answer: '', error: 'The model gave no usable answer after 3 tries, so none is shown. Try again, or ask in other words.' });
  });

  it('streams at most 16,000 characters of a round, whatever the model sends', async () => {
    const deltas: string[] = [];
    model.push({ reply: `{"answer": "${'Three times. '.repeat(16_000)}"}`, stream: { pieceChars: 5000 } }, { reply: '{"answer": "Three times [1].", "citations": ["[1]"], "confidence": "high"}' });
    const result = await runAgent(ragScenario('alpha-stream'), 'How often is blood pressure measured?', { context: deps, onEvent: (event) => { if (event.type === 'text_delta' && event.round === 1) deltas.push(event.text); } });
    expect(result).toMatchObject({ status: 'success', answer: 'Three times [1].' });
    expect(deltas.join('').length).toBe(MAX_ANSWER_CHARS);
  });

  it('fails a text answer cut off by the token limit instead of returning the cut-off text as a success', async () => {
    const textScenario = loadScenario(writeScenario(dir, 'plain.yaml', 'id: plain\nname: plain\nsystem_prompt: Answer briefly.\n'));
    const before = model.requests.length;
    model.push({ reply: 'Half an ans', finishReason: 'length' }, { reply: 'Half an ans', finishReason: 'length' });
    const cut = await runAgent(textScenario, 'Explain the visit schedule.', { context: deps });
    expect(cut).toMatchObject({ status: 'failed', answer: '' });
    expect(cut.error).toMatch(/cut off by its output token limit/);
    expect(cut.error).toContain('model.max_tokens');
    // A prose scenario is asked for its whole answer again, not for JSON.
    expect((model.requests[before + 1]!.body.messages as Array<{ content: string }>).at(-1)!.content).toMatch(/cut off at the output token limit[\s\S]*Reply with your whole answer again/);

    model.push({ reply: 'Half an ans', finishReason: 'length' }, { reply: 'Visits are at weeks 0, 4 and 12.' });
    expect(await runAgent(textScenario, 'Explain the visit schedule.', { context: deps })).toMatchObject({ status: 'success', answer: 'Visits are at weeks 0, 4 and 12.', error: '' });
  });

  it('returns a failed result naming the variables to set when no LLM is configured, and still records the trace', async () => {
    const bare = await buildTestContext({ engine: 'pglite' });
    try {
      const result = await runAgent(loadScenario(path.join(process.cwd(), 'scenarios', 'protocol-qa.yaml')), 'What are the inclusion criteria?', {
        context: { llm: bare.llm, tools: bare.tools, trace: bare.trace, rag: bare.rag },
      });
      expect(result).toMatchObject({ status: 'failed', answer: '', structuredOutput: {}, references: [], toolCalls: [], rawOutput: '' });
      expect(result.error).toContain('LLM_BASE_URL');
      expect(result.error).toContain('LLM_MODEL');
      const trace = await bare.trace.get(result.traceId, ALL_TRACES);
      expect(trace).toMatchObject({ status: 'failed', kind: 'agent', name: 'protocol-qa' });
      expect(trace?.error).toContain('LLM_BASE_URL');
    } finally {
      await bare.close();
    }
  });

  it('returns a failed result when the LLM call fails, with an actionable error', async () => {
    model.push({ status: 401, body: { error: { message: 'invalid api key sk-test-secret-key-000000000000' } } });
    const result = await runAgent(ragScenario('alpha'), 'week 4 visit window', { context: deps });
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/refused ClinAgent's credentials \(HTTP 401\)\. An administrator needs to check its API key/);
    expect(result.error).not.toContain(model.baseURL);
    expect(result.references.length).toBeGreaterThan(0);
    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(JSON.stringify(trace)).not.toContain('sk-test-secret-key-000000000000');
  });

  it('hides internal failure details from the user but keeps them in the trace', async () => {
    // A real fault: retrieval against a database that has been closed.
    const broken = await buildTestContext({ engine: 'pglite' });
    await broken.close();
    const result = await runAgent(ragScenario('alpha'), 'week 4 visit window', { context: { ...deps, rag: broken.rag } });
    expect(result.status).toBe('failed');
    expect(result.error).toBe(`The agent run failed because of an internal error. Trace ${result.traceId} and the server log have the details.`);
    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace?.error).toBeTruthy();
    expect(trace?.error).not.toBe(result.error);
    expect(trace?.spans.find((s) => s.kind === 'retrieval')?.status).toBe('failed');
  });

  it('has every AgentResult field present on success and failure', async () => {
    model.push({ reply: 'plain answer' });
    const textScenario = loadScenario(writeScenario(dir, 'plain.yaml', 'id: plain\nname: Plain\nsystem_prompt: Be brief.\n'));
    const ok = await runAgent(textScenario, 'hi', { context: deps });
    const failed = await runAgent(textScenario, '   ', { context: deps });
    for (const result of [ok, failed]) {
      expect(Object.keys(result).sort()).toEqual(['answer', 'conversationId', 'error', 'files', 'latencyMs', 'modelName', 'rawOutput', 'references', 'status', 'structuredOutput', 'toolCalls', 'traceId']);
    }
    expect(ok).toMatchObject({ status: 'success', answer: 'plain answer', modelName: 'scripted-model', error: '' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('input is empty');
  });
});
