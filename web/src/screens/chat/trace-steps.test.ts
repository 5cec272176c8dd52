import { describe, expect, it } from 'vitest';
import type { TraceSpan } from '../../api';
import { outlineTrace } from './trace-steps';

const span = (kind: string, name: string, startedAt: string, durationMs: number, output: unknown = null): TraceSpan => ({
  id: name,
  kind,
  name,
  status: 'success',
  error: null,
  promptTokens: 0,
  completionTokens: 0,
  startedAt,
  durationMs,
  input: null,
  output,
});

describe('outlineTrace', () => {
  it('reads thought, actions and observations of each step and puts llm and tool spans under the step they ran in', () => {
    const spans = [
      span('llm', 'router', '2026-11-24T10:00:00.000Z', 50),
      span('step', 'agent:round 1', '2026-11-24T10:00:01.000Z', 900, {
        outcome: 'tools',
        thought: 'I will count the subjects.',
        actions: [{ tool: 'query_records', arguments: '{"site":"01"}' }],
        observations: ['<tool_result>12</tool_result>'],
      }),
      span('llm', 'chat', '2026-11-24T10:00:01.010Z', 300),
      span('tool', 'query_records', '2026-11-24T10:00:01.400Z', 20),
      span('step', 'agent:round 2', '2026-11-24T10:00:02.000Z', 400, { outcome: 'answer', thought: '12 subjects.' }),
      span('llm', 'chat', '2026-11-24T10:00:02.001Z', 390),
      span('step', 'agent:round 3', '2026-11-24T10:00:03.000Z', 10, { outcome: 'correction', problems: ['answer: required'] }),
    ];
    const outline = outlineTrace(spans);
    expect(outline.others.map((s) => s.name)).toEqual(['router']);
    expect(outline.steps.map((s) => [s.span.name, s.children.map((c) => c.name)])).toEqual([
      ['agent:round 1', ['chat', 'query_records']],
      ['agent:round 2', ['chat']],
      ['agent:round 3', []],
    ]);
    expect(outline.steps[0]).toMatchObject({
      outcome: 'tools',
      thought: 'I will count the subjects.',
      actions: [{ tool: 'query_records', arguments: '{"site":"01"}' }],
      observations: ['<tool_result>12</tool_result>'],
    });
    expect(outline.steps[2]?.problems).toEqual(['answer: required']);
  });

  it('gives a span to the innermost of nested steps and tolerates outputs it does not know', () => {
    const spans = [
      span('step', 'soft_rule', '2026-11-24T10:00:00.000Z', 5000, { passed: true }),
      span('step', 'soft_rule:round 1', '2026-11-24T10:00:00.100Z', 1000, 'not an object'),
      span('llm', 'chat', '2026-11-24T10:00:00.200Z', 500),
      span('llm', 'chat-late', '2026-11-24T10:00:02.000Z', 500),
    ];
    const outline = outlineTrace(spans);
    expect(outline.steps.map((s) => s.children.map((c) => c.name))).toEqual([['chat-late'], ['chat']]);
    expect(outline.steps[1]).toMatchObject({ actions: [], observations: [], thought: undefined });
  });

  it("counts a step's tokens from the model calls inside it (the step span records none), not 0 / 0", () => {
    const withTokens = (s: TraceSpan, promptTokens: number, completionTokens: number): TraceSpan => ({ ...s, promptTokens, completionTokens });
    const spans = [
      withTokens(span('llm', 'router', '2026-11-24T10:00:00.000Z', 50), 40, 5),
      span('step', 'agent:round 1', '2026-11-24T10:00:01.000Z', 900, { outcome: 'tools' }),
      withTokens(span('llm', 'chat', '2026-11-24T10:00:01.010Z', 300), 1200, 30),
      span('tool', 'query_records', '2026-11-24T10:00:01.400Z', 20),
      withTokens(span('llm', 'correction', '2026-11-24T10:00:01.500Z', 300), 1300, 12),
      span('step', 'agent:round 2', '2026-11-24T10:00:02.000Z', 10, { outcome: 'answer' }),
    ];
    const outline = outlineTrace(spans);
    expect(outline.steps.map((s) => [s.promptTokens, s.completionTokens])).toEqual([[2500, 42], [0, 0]]);
    expect(outline.others[0]).toMatchObject({ promptTokens: 40, completionTokens: 5 });
  });
});
