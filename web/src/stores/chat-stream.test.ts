import { describe, expect, it } from 'vitest';
import { applyStreamEvent, EMPTY_STREAM, previewText, runningTools, shownText } from './chat-stream';

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
    expect(EMPTY_STREAM).toEqual({ text: '', lastRound: -1, tools: [], isStopped: false, parts: [] });
  });

  it('keeps every tool call once finished, so a page can say which tools the answer used', () => {
    let answer = applyStreamEvent(EMPTY_STREAM, { event: 'tool_call_started', data: { type: 'tool_call_started', round: 0, callId: 'c1', name: 'search_guidelines' } });
    expect(runningTools(answer)).toEqual(['search_guidelines']);
    answer = applyStreamEvent(answer, { event: 'tool_call_finished', data: { type: 'tool_call_finished', round: 0, callId: 'c1', name: 'search_guidelines', success: true } });
    answer = applyStreamEvent(answer, { event: 'text_delta', data: { type: 'text_delta', round: 1, text: 'See a dermatologist.' } });
    expect(answer.tools).toEqual([{ callId: 'c1', name: 'search_guidelines', status: 'ok' }]);
    expect(runningTools(answer)).toEqual([]);
  });

  it('shows only the replacement once the answer was replaced (moderation), parts or not', () => {
    let answer = applyStreamEvent(EMPTY_STREAM, { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'Take twice the dose.' } });
    answer = applyStreamEvent(answer, { event: 'text_replaced', data: { type: 'text_replaced', text: 'This answer was withheld by a safety rule.', reason: 'moderation' } });
    expect(shownText(answer)).toBe('This answer was withheld by a safety rule.');
    expect(answer.replaced).toEqual({ reason: 'moderation' });
    // Text after the replacement continues it, in a new paragraph as any new round.
    answer = applyStreamEvent(answer, { event: 'text_delta', data: { type: 'text_delta', round: 1, text: 'Ask your doctor.' } });
    expect(shownText(answer)).toBe('This answer was withheld by a safety rule.\n\nAsk your doctor.');

    const parted = applyStreamEvent(applyStreamEvent(EMPTY_STREAM, { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'first part', part: 0 } }), {
      event: 'text_replaced',
      data: { type: 'text_replaced', text: 'Replaced.' },
    });
    expect(shownText(parted)).toBe('Replaced.');
  });

  it('starts a new paragraph where a new part begins, even in the same round', () => {
    let answer = applyStreamEvent(EMPTY_STREAM, { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'One.', part: 0 } });
    answer = applyStreamEvent(answer, { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'Two.', part: 1 } });
    expect(answer.text).toBe('One.\n\nTwo.');
    expect(shownText(answer)).toBe('One.\n\nTwo.');
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
