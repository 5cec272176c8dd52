import { describe, expect, it } from 'vitest';
import { applyStreamEvent, EMPTY_STREAM, previewText } from './chat-stream';

describe('applyStreamEvent', () => {
  it('appends text, starts a new paragraph for a new round and follows tool calls from start to end', () => {
    let answer = EMPTY_STREAM;
    answer = applyStreamEvent(answer, { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'Let me ' } });
    answer = applyStreamEvent(answer, { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'check.' } });
    answer = applyStreamEvent(answer, { event: 'tool_call_started', data: { type: 'tool_call_started', round: 0, callId: 'c1', name: 'calculate_rate', arguments: '{}' } });
    expect(answer.tools).toEqual([{ callId: 'c1', name: 'calculate_rate', status: 'running' }]);
    answer = applyStreamEvent(answer, { event: 'tool_call_finished', data: { type: 'tool_call_finished', round: 0, callId: 'c1', name: 'calculate_rate', success: false, error: 'denominator: must be greater than 0' } });
    answer = applyStreamEvent(answer, { event: 'text_delta', data: { type: 'text_delta', round: 1, text: 'The rate is undefined.' } });
    expect(answer.text).toBe('Let me check.\n\nThe rate is undefined.');
    expect(answer.tools).toEqual([{ callId: 'c1', name: 'calculate_rate', status: 'failed', error: 'denominator: must be greater than 0' }]);
    expect(EMPTY_STREAM).toEqual({ text: '', lastRound: -1, tools: [], isStopped: false });
  });

  it('keeps the question of a run that stopped for the user, without a run id when it has none', () => {
    const answer = applyStreamEvent(EMPTY_STREAM, { event: 'waiting', data: { type: 'waiting', awaiting: 'answer', prompt: 'Which visit do you mean?' } });
    expect(answer.waiting).toEqual({ awaiting: 'answer', prompt: 'Which visit do you mean?' });
    expect(answer.text).toBe('');
  });
});

describe('previewText', () => {
  it('shows the answer string of a JSON reply as far as it has arrived, escapes decoded', () => {
    expect(previewText('{"answer": "Adults 18')).toBe('Adults 18');
    expect(previewText('{"answer": "Line one\\nline \\"two\\" \\u00b0C", "citations": [')).toBe('Line one\nline "two" °C');
    expect(previewText('```json\n{"answer": "ok\\')).toBe('ok');
    expect(previewText('{"completion_rate": 0.8, "summary": "80% of')).toBe('80% of');
    expect(previewText('Plain text answer')).toBe('Plain text answer');
  });

  it('never shows raw JSON: an answer field not yet arrived, or a model answer of the wrong shape, previews as nothing', () => {
    expect(previewText('{"ans')).toBe('');
    expect(previewText('{"answer": 42, "citations": {"items": 42}}')).toBe('');
    expect(previewText('  [{"answer": "x"}]')).toBe('');
    expect(previewText('```json\n{"summary": {"text": "80%"}}')).toBe('');
  });
});
