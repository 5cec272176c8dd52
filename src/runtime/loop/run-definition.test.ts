import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ClinAgentError } from '../../core/errors.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { decisionAnswerSchema, textAnswer, type AgentDefinition } from '../definitions/index.js';
import { runDefinition, type RunDefinitionOptions } from './index.js';

type Sent = Array<{ role: string; content: string }>;

/** A few lines of definition: a consult that decides in JSON, may look one thing up, and waits for the patient. */
const CONSULT: AgentDefinition<string, Record<string, unknown>> = {
  id: 'consult_test',
  name: 'Consult',
  description: 'Asks, looks up, diagnoses.',
  sourceFile: 'builtin:run-definition.test.ts',
  instructions: 'You are a dermatology consultant. Answer with one JSON decision.',
  tools: ['lookup_lesion_history'],
  decision: { mode: 'json', actions: ['use_tool', 'ask', 'diagnose'], toolAction: 'use_tool', waitOn: { ask: 'answer' } },
  output: { name: 'text' },
  // What a valid answer is belongs to the definition: the loop checks it, whoever runs the agent.
  answer: decisionAnswerSchema(z.looseObject({ action: z.literal('diagnose'), diagnosis: z.string({ error: 'required with action "diagnose"' }) })),
  answerShape: '{"action": "diagnose", "diagnosis": "..."}',
  stop: { maxRounds: 3 },
  history: { strategy: 'none' },
  model: { temperature: 0.2, maxTokens: 300, jsonMode: true },
  engine: { type: 'builtin' },
};

describe('runDefinition: a definition on the one loop', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    ctx.tools.register({ name: 'lookup_lesion_history', description: 'Earlier notes of a lesion.', schema: z.object({ lesionId: z.string().min(1) }), run: ({ lesionId }) => ({ lesionId, notes: ['6 mm, irregular border'] }) });
    ctx.tools.register({ name: 'order_biopsy', description: 'Orders a biopsy.', schema: z.object({}), run: () => ({ ordered: true }) });
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  async function run<I, O>(definition: AgentDefinition<I, O>, overrides: Partial<RunDefinitionOptions<I>> = {}) {
    const trace = await ctx.trace.start({ kind: 'test', name: definition.id });
    const outcome = await runDefinition<I, O>(definition, {
      llm: ctx.llm,
      trace,
      registry: ctx.tools,
      input: 'Lesion L7 has grown.' as I,
      ...overrides,
    });
    await trace.finish({ status: 'success' });
    return { outcome, trace: (await ctx.trace.get(trace.traceId, ALL_TRACES))! };
  }

  it('sends the text instructions as the system prompt, the input as the user message, with the model settings and only its tools', async () => {
    const before = model.requests.length;
    model.push({ reply: '{"action": "use_tool", "tool": "order_biopsy", "arguments": {}}' }, { reply: '{"action": "diagnose", "diagnosis": "atypical naevus"}' });
    const { outcome, trace } = await run(CONSULT);
    expect(outcome).toMatchObject({ kind: 'final', value: { diagnosis: 'atypical naevus' } });
    const first = model.requests[before]!.body;
    expect(first.messages).toEqual([
      { role: 'system', content: CONSULT.instructions },
      { role: 'user', content: 'Lesion L7 has grown.' },
    ]);
    expect(first).toMatchObject({ temperature: 0.2, max_tokens: 300, response_format: { type: 'json_object' } });
    // JSON decisions: no native tools are offered, and a tool outside the definition's list is refused, not run.
    expect(first.tools).toBeUndefined();
    expect(outcome.toolCalls).toEqual([expect.objectContaining({ toolName: 'order_biopsy', success: false, error: expect.stringContaining('Allowed tools: lookup_lesion_history') })]);
    expect(trace.spans.filter((s) => s.kind === 'step').map((s) => s.name)).toEqual(['consult_test:round 1', 'consult_test:round 2']);
  });

  it("ends waiting for the person's answer on a waitOn action, the decision in hand", async () => {
    model.push(
      { reply: '{"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {"lesionId": "L7"}}' },
      { reply: '{"action": "ask", "question": "Has it bled?"}' },
    );
    const { outcome } = await run(CONSULT);
    expect(outcome).toMatchObject({ kind: 'waiting', awaiting: 'answer', action: 'ask', decision: { question: 'Has it bled?' }, progress: { rounds: 2, toolRounds: 1 } });
  });

  it('corrects an unusable answer with the one correction message and the shape the definition declares', async () => {
    const before = model.requests.length;
    model.push({ reply: '{"action": "diagnose"}' }, { reply: '{"action": "diagnose", "diagnosis": "benign"}' });
    const { outcome } = await run(CONSULT);
    expect(outcome).toMatchObject({ kind: 'final', progress: { corrections: 1 } });
    expect((model.requests[before + 1]!.body.messages as Sent).at(-1)!.content).toBe(
      'Your answer could not be used:\ndiagnosis: required with action "diagnose"\nReply with the corrected JSON object only: {"action": "diagnose", "diagnosis": "..."}.',
    );
  });

  it("stops at the definition's round limit", async () => {
    const call = { reply: '{"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {"lesionId": "L7"}}' };
    const before = model.requests.length;
    model.push(call, call, call);
    const { outcome } = await run(CONSULT);
    expect(model.requests).toHaveLength(before + 3);
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'max_rounds', progress: { rounds: 3 } });
  });

  it("builds the messages with the definition's prompt builder, and offers only the request tools its registry has", async () => {
    const before = model.requests.length;
    const builder: AgentDefinition<{ lesion: string }, { content: string }> = {
      ...CONSULT,
      answer: textAnswer(z.string().transform((content) => ({ content }))),
      correction: undefined,
      id: 'builder_test',
      instructions: (input) => [
        { role: 'system', content: 'Native consultant.' },
        { role: 'user', content: `Lesion ${input.lesion}?` },
      ],
      tools: [],
      requestTools: ['lookup_lesion_history', 'read_clinical_data'],
      decision: { mode: 'native' },
      model: {},
    };
    model.push({ reply: 'benign' });
    const { outcome } = await run(builder, { input: { lesion: 'L9' } });
    expect(outcome.kind).toBe('final');
    const sent = model.requests[before]!.body;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Native consultant.' },
      { role: 'user', content: 'Lesion L9?' },
    ]);
    expect((sent.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(['lookup_lesion_history']);
  });

  it('withholds tools after maxToolRounds, counting failed tool rounds too when the definition says so', async () => {
    const native: AgentDefinition<string, { content: string }> = { ...CONSULT, answer: textAnswer(z.string().transform((content) => ({ content }))), id: 'native_test', decision: { mode: 'native' }, model: {}, stop: { maxToolRounds: 1, maxRounds: 4 }, toolUse: { whenWithheld: 'finish', toolRoundsCounted: 'all' } };
    const before = model.requests.length;
    model.push({ toolCalls: [{ name: 'lookup_lesion_history', arguments: {} }] }, { reply: 'benign' });
    const { outcome } = await run(native);
    expect(outcome).toMatchObject({ kind: 'final', value: { content: 'benign' }, progress: { failedToolRounds: 1 } });
    // The failed round used the one tool round: the second call offers no tools.
    expect(model.requests[before]!.body.tools).toHaveLength(1);
    expect(model.requests[before + 1]!.body.tools).toBeUndefined();
  });

  it('counts a failed model call as a failed attempt when the definition says so', async () => {
    model.push({ status: 400, body: { error: { message: 'no' } } }, { status: 400, body: { error: { message: 'no' } } });
    const upkeep: AgentDefinition<string, Record<string, unknown>> = { ...CONSULT, id: 'upkeep_test', stop: { attempts: 2, modelErrorsAreAttempts: true } };
    const { outcome } = await run(upkeep);
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'retries_exhausted', progress: { failedModelCalls: 2 }, lastFailure: { kind: 'model' } });
  });

  it('refuses input that is not text for text instructions, and a definition of another engine, before any model call', async () => {
    const before = model.requests.length;
    const notText = await run(CONSULT, { input: { lesion: 'L7' } as never }).catch((error: unknown) => error);
    expect(ClinAgentError.isInstance(notText) && notText.code).toBe('VALIDATION_FAILED');
    const dify = await run({ ...CONSULT, engine: { type: 'dify', baseUrl: 'https://dify.example.org/v1', apiKeyEnv: 'DIFY_KEY', appMode: 'chat' } }).catch((error: unknown) => error);
    expect(ClinAgentError.isInstance(dify) && dify.code).toBe('AGENT_INVALID');
    expect(model.requests).toHaveLength(before);
  });
});
