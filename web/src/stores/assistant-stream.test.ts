import { describe, expect, it } from 'vitest';
import type { ChatPart, Intent, RunProgressEvent } from '../api';
import { answerBadges, badgeTone, streamBadges } from './assistant-stream';
import { applyStreamEvent, EMPTY_STREAM, runningTools, shownText, type StreamingAnswer } from './chat-stream';

const data: Intent = { type: 'data_question', text: 'How many subjects at site 01?' };
const write: Intent = { type: 'write_request', text: 'Change S-017 age to 45' };

function fold(events: RunProgressEvent[], from: StreamingAnswer = EMPTY_STREAM): StreamingAnswer {
  return events.reduce(applyStreamEvent, from);
}

const part = (intent: Intent, answer: string, ending: ChatPart['ending'], ok = true): ChatPart => ({ intent, answer, ending, ok });
const finished = (index: number, intent: Intent, answer: string, ending: string, ok = true): RunProgressEvent => ({
  event: 'part_finished',
  data: { type: 'part_finished', part: index, planned: { type: intent.type, text: intent.text }, answer, ending, ok },
});

describe("the trial assistant's stream", () => {
  it('follows the plan, tool calls and text of each part until it finishes', () => {
    const stream = fold([
      { event: 'run_started', data: { type: 'run_started', traceId: 't1', conversationId: 'c1' } },
      { event: 'plan', data: { type: 'plan', parts: [data, write], routedBy: 'model', routingFallback: null } },
      { event: 'part_started', data: { type: 'part_started', part: 0, planned: data } },
      { event: 'tool_call_started', data: { type: 'tool_call_started', round: 0, callId: 'c1', name: 'query_records', part: 0 } },
      { event: 'tool_call_started', data: { type: 'tool_call_started', round: 0, callId: 'c2', name: 'query_records', part: 0 } },
      // The second call of the same tool ends first: the call id, not the name, says which one.
      { event: 'tool_call_finished', data: { type: 'tool_call_finished', round: 0, callId: 'c2', name: 'query_records', success: false, part: 0 } },
    ]);
    expect(stream).toMatchObject({ traceId: 't1', conversationId: 'c1', plan: { routedBy: 'model' } });
    expect(stream.tools).toEqual([
      { callId: 'c1', name: 'query_records', status: 'running', part: 0 },
      { callId: 'c2', name: 'query_records', status: 'failed', part: 0 },
    ]);
    expect(runningTools(stream)).toEqual(['query_records']);
    expect(streamBadges(stream)).toEqual([{ type: 'data_question', ok: true }, { type: 'write_request', ok: true }]);

    const done = fold(
      [
        { event: 'tool_call_finished', data: { type: 'tool_call_finished', round: 0, callId: 'c1', name: 'query_records', success: true, part: 0 } },
        { event: 'text_delta', data: { type: 'text_delta', round: 0, text: '12 subjects', part: 0 } },
        { event: 'text_delta', data: { type: 'text_delta', round: 0, text: ' at site 01.', part: 0 } },
      ],
      stream,
    );
    expect(shownText(done)).toBe('12 subjects at site 01.');
    expect(runningTools(done)).toEqual([]);

    const all = fold(
      [
        finished(0, data, '12 subjects at site 01.', 'answer'),
        { event: 'part_started', data: { type: 'part_started', part: 1, planned: write } },
        finished(1, write, 'Changes go through REDCap.', 'guided'),
      ],
      done,
    );
    expect(shownText(all)).toBe('12 subjects at site 01.\n\nChanges go through REDCap.');
    expect(streamBadges(all)).toEqual([
      { type: 'data_question', ending: 'answer', ok: true },
      { type: 'write_request', ending: 'guided', ok: true },
    ]);
  });

  it('keeps parts in plan order whatever order their events arrive in', () => {
    const stream = fold([
      { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'second', part: 1 } },
      { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'first', part: 0 } },
    ]);
    expect(stream.parts.map((p) => p.index)).toEqual([0, 1]);
    expect(shownText(stream)).toBe('first\n\nsecond');
  });

  it('keeps what a run that stopped for the user asks of them, beside the text it wrote', () => {
    const stream = fold([
      { event: 'text_delta', data: { type: 'text_delta', round: 0, text: 'Two sites answered.', part: 0 } },
      { event: 'waiting', data: { type: 'waiting', runId: 'r1', awaiting: 'approval', prompt: 'Send the 3 queries to site 02?' } },
    ]);
    expect(stream.waiting).toEqual({ runId: 'r1', awaiting: 'approval', prompt: 'Send the 3 queries to site 02?' });
    expect(shownText(stream)).toBe('Two sites answered.');
  });
});

describe('badges', () => {
  it('reads a finished answer from its parts, or its intents when no part ran', () => {
    expect(answerBadges({ intents: [data], parts: [part(data, 'x', 'max_rounds', false)] })).toEqual([{ type: 'data_question', ending: 'max_rounds', ok: false }]);
    expect(answerBadges({ intents: [write], parts: [] })).toEqual([{ type: 'write_request', ok: true }]);
  });

  it('marks refused parts as failures, limited ones as warnings and plain answers as information', () => {
    expect(badgeTone({ type: 'write_request', ending: 'forbidden', ok: false })).toBe('fail');
    expect(badgeTone({ type: 'data_question', ending: 'token_budget', ok: false })).toBe('warn');
    expect(badgeTone({ type: 'data_question', ending: 'answer', ok: true })).toBe('info');
    expect(badgeTone({ type: 'write_request', ending: 'guided', ok: true })).toBe('ok');
    expect(badgeTone({ type: 'data_question', ok: true })).toBe('neutral');
  });
});
