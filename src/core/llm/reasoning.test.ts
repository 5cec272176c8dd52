import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel, type ScriptedStep } from '../../testing/scripted-model.js';
import { openTestDatabase } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { ALL_TRACES, createTraceStore } from '../trace/store.js';
import { createLlmGateway } from './gateway.js';
import { createThinkingFilter, splitReasoning } from './reasoning.js';

const VERDICT = '{"passed": true, "reason": "Dizziness fits known hypertension.", "confidence": 0.9, "evidence": "既往史: 高血压"}';

describe('splitReasoning', () => {
  it('leaves an answer without thinking exactly as it is', () => {
    expect(splitReasoning('  {"passed": true}\n')).toEqual({ content: '  {"passed": true}\n', reasoning: '' });
  });

  it('takes a <think> block out of the answer, with the verdict the model considered and dropped', () => {
    expect(splitReasoning(`<think>let me check... {"passed": false}</think>\n${VERDICT}`)).toEqual({ content: VERDICT, reasoning: 'let me check... {"passed": false}' });
  });

  it('takes out every block, <thinking> too, and keeps the text between them', () => {
    expect(splitReasoning('<think>one</think>Part A. <THINKING>two</THINKING>Part B.')).toEqual({ content: 'Part A. Part B.', reasoning: 'one\n\ntwo' });
  });

  it('treats text before a lone closing tag as thinking (DeepSeek-R1 templates open the tag in the prompt)', () => {
    expect(splitReasoning('The SBP is 300, implausible.\n</think>\n\n{"passed": false}')).toEqual({ content: '{"passed": false}', reasoning: 'The SBP is 300, implausible.' });
  });

  it('never lets an unterminated <think> of a cut-off model leak into the answer', () => {
    expect(splitReasoning('<think>\nThe record says {"passed": true} but wait')).toEqual({ content: '', reasoning: 'The record says {"passed": true} but wait' });
    expect(splitReasoning('<think>a</think>{"passed": false}<think>still going')).toEqual({ content: '{"passed": false}', reasoning: 'a\n\nstill going' });
  });

  it('puts a separate reasoning field first and cleans the content as well', () => {
    expect(splitReasoning(VERDICT, 'Checked the history first.')).toEqual({ content: VERDICT, reasoning: 'Checked the history first.' });
    expect(splitReasoning(`<think>inline</think>${VERDICT}`, 'field')).toEqual({ content: VERDICT, reasoning: 'field\n\ninline' });
  });
});

describe('the gateway with a thinking model', () => {
  let database: Database;
  let model: ScriptedModel | undefined;

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  async function chatWithTrace(step: ScriptedStep) {
    model = await startScriptedModel([step]);
    const gateway = createLlmGateway({ baseUrl: model.baseURL, model: 'qwen3-test', timeoutMs: 2000, maxRetries: 0 });
    const store = createTraceStore(database.db);
    const run = await store.start({ kind: 'agent', name: 'thinking' });
    const response = await gateway.chat({ messages: [{ role: 'user', content: 'Judge the record.' }] }, run);
    await run.finish({ status: 'success' });
    const span = (await store.get(run.traceId, ALL_TRACES))!.spans[0]!;
    return { response, span };
  }

  it('returns the answer without the <think> block and keeps the thinking on the response and in the llm span', async () => {
    const { response, span } = await chatWithTrace({ reply: `<think>let me check... {"passed": false}</think>${VERDICT}` });

    expect(response.content).toBe(VERDICT);
    expect(response.reasoning).toBe('let me check... {"passed": false}');
    expect(span).toMatchObject({ kind: 'llm', output: { content: VERDICT, reasoning: 'let me check... {"passed": false}' } });
  });

  it('keeps reasoning_content out of the answer and in the llm span', async () => {
    const { response, span } = await chatWithTrace({ reply: VERDICT, reasoningContent: 'The history lists hypertension; dizziness fits. {"passed": false} would be wrong.' });

    expect(response.content).toBe(VERDICT);
    expect(response.reasoning).toContain('The history lists hypertension');
    expect(span.output).toMatchObject({ content: VERDICT, reasoning: expect.stringContaining('dizziness fits') });
  });

  it('has no reasoning in the span of a model that does not think aloud', async () => {
    const { response, span } = await chatWithTrace({ reply: VERDICT });

    expect(response).toMatchObject({ content: VERDICT, reasoning: '' });
    expect(span.output).not.toHaveProperty('reasoning');
  });
});

/** Feeds `raw` to a fresh filter in pieces of `size` characters and returns everything it let through. */
function filtered(raw: string, size: number): string {
  const filter = createThinkingFilter();
  let shown = '';
  for (let i = 0; i < raw.length; i += size) shown += filter.push(raw.slice(i, i + size));
  return shown + filter.end();
}

describe('createThinkingFilter', () => {
  const cases: Array<[raw: string, shown: string]> = [
    ['{"passed": true}', '{"passed": true}'],
    [`<think>let me check... {"passed": false}</think>\n\n${VERDICT}`, VERDICT],
    ['<THINKING>a</thinking>first <think>b</think>second', 'first second'],
    ['answer so far <think>cut off by max_tokens', 'answer so far '],
    ['a < b and <thin ice> is not a tag', 'a < b and <thin ice> is not a tag'],
    ['thinking whose opening tag was in the prompt</think>the answer', 'thinking whose opening tag was in the promptthe answer'],
  ];

  it('lets through the same text, however the reply is cut into pieces', () => {
    for (const [raw, shown] of cases) {
      for (let size = 1; size <= raw.length; size++) expect(filtered(raw, size), `${raw} in pieces of ${size}`).toBe(shown);
    }
  });

  it('shows the answer of a reply that thinks first as splitReasoning gives it', () => {
    const raw = `<think>SBP 300? {"passed": false}</think>\n${VERDICT}`;
    for (let size = 1; size <= raw.length; size++) expect(filtered(raw, size)).toBe(splitReasoning(raw).content);
  });
});
