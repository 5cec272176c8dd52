import { describe, expect, it } from 'vitest';
import type { OutputType } from './output-types.js';
import { parseStructuredOutput } from './parse.js';

const answer = { answer: 'S004 has no consent date.', citations: ['[1]'], confidence: 'high' };

describe('parseStructuredOutput', () => {
  it('parses a plain JSON answer exactly, with no warnings', () => {
    const result = parseStructuredOutput(JSON.stringify(answer), 'qa_answer');

    expect(result).toEqual({ success: true, data: answer, parsedAs: 'exact', error: '', warnings: [], rawOutput: JSON.stringify(answer), truncated: false });
  });

  it('extracts JSON from a ```json fence', () => {
    const raw = `Here is the result:\n\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\`\nLet me know if you need more.`;

    const result = parseStructuredOutput(raw, 'qa_answer');

    expect(result).toMatchObject({ success: true, parsedAs: 'extracted', data: answer, warnings: [] });
    expect(result.rawOutput).toBe(raw);
  });

  it('extracts JSON embedded in prose without a fence', () => {
    const result = parseStructuredOutput(`Verdict follows. ${JSON.stringify(answer)} That is all.`, 'qa_answer');

    expect(result).toMatchObject({ success: true, parsedAs: 'extracted', data: answer });
  });

  it.each([
    ['a trailing comma', 'Verdict:\n{"answer": "query S004", "citations": ["[1]"], "confidence": "low",}'],
    ['single quotes', "{'answer': 'query S004', 'citations': ['[1]'], 'confidence': 'low'}"],
    ['unquoted keys', '{answer: "query S004", citations: ["[1]"], confidence: "low"}'],
  ])('repairs %s and says so', (_, raw) => {
    const result = parseStructuredOutput(raw, 'qa_answer');

    expect(result).toMatchObject({ success: true, parsedAs: 'repaired', data: { answer: 'query S004', citations: ['[1]'], confidence: 'low' }, warnings: [] });
  });

  it('fails, without throwing and without guessing the rest, on JSON cut off mid-object', () => {
    const full = JSON.stringify({ summary: 'Two consent gaps', completion_rate: 0.97, issues: [{ record_id: 'S004', field: 'consent_date', problem: 'missing' }], action_items: ['Call SITE-01'] });
    for (let cut = 1; cut < full.length; cut += 7) {
      const raw = full.slice(0, cut);
      const result = parseStructuredOutput(raw, 'data_check_report');
      expect(result, raw).toMatchObject({ success: false, parsedAs: 'failed', data: {} });
      expect(result.rawOutput).toBe(raw);
      expect(result.error).not.toBe('');
    }

    // Repair could close these, but what it closes is a shorter answer than the model meant ("Che" for a name).
    for (const raw of ['{"answer": "S004 misses consent", "citations": ["[1]", "[2', '{"action": "respond", "response": "Che', 'Here you go: {"answer": {"text": "Half an ans']) {
      const cut = parseStructuredOutput(raw, { name: 'any', schema: { type: 'object' } });
      expect(cut, raw).toMatchObject({ success: false, truncated: true, parsedAs: 'failed', data: {}, rawOutput: raw });
      expect(cut.error).toMatch(/cut off before it closes.*truncated/);
    }
  });

  it('still repairs a complete answer that only has a syntax slip, and does not call it truncated', () => {
    const slip = parseStructuredOutput('{"answer": "a } inside a string", "citations": ["[1]",], "confidence": "low"}', 'qa_answer');
    expect(slip).toMatchObject({ success: true, parsedAs: 'repaired', truncated: false, data: { answer: 'a } inside a string', confidence: 'low' } });
  });

  it('fails with an error and keeps the raw output when there is no JSON at all', () => {
    const raw = 'I could not find any issues in the records you sent.';

    const result = parseStructuredOutput(raw, 'qa_answer');

    expect(result.success).toBe(false);
    expect(result.parsedAs).toBe('failed');
    expect(result.data).toEqual({});
    expect(result.rawOutput).toBe(raw);
    expect(result.error).toMatch(/No JSON object found/);
    expect(result.error).toContain('qa_answer');
  });

  it('fills missing fields with an empty value of their type and warns about each', () => {
    const result = parseStructuredOutput('{"summary": "All complete"}', 'data_check_report');

    expect(result.success).toBe(true);
    expect(result.data).toEqual({ summary: 'All complete', completion_rate: null, issues: [], action_items: [] });
    expect(result.warnings).toEqual(expect.arrayContaining(['issues: missing, filled with []', 'action_items: missing, filled with []', 'completion_rate: missing, filled with null']));

    const qa = parseStructuredOutput('{"confidence": "medium"}', 'qa_answer');
    expect(qa.data).toEqual({ answer: '', citations: [], confidence: 'medium' });
    expect(qa.warnings).toEqual(['answer: missing, filled with ""', 'citations: missing, filled with []']);
  });

  it('fills a missing field from its schema default when it has one', () => {
    const type: OutputType = { name: 'triage', schema: { type: 'object', properties: { level: { type: 'string', default: 'routine' }, reason: { type: 'string' } }, required: ['level'] } };

    expect(parseStructuredOutput('{"reason": "stable"}', type)).toMatchObject({ success: true, data: { level: 'routine', reason: 'stable' }, warnings: ['level: missing, filled with "routine"'] });
  });

  it('fails an object that has none of the fields of the output type instead of filling it with empties', () => {
    for (const raw of ['{}', '{"unrelated": 1}']) {
      const result = parseStructuredOutput(raw, 'qa_answer');
      expect(result, raw).toMatchObject({ success: false, parsedAs: 'failed', data: {}, rawOutput: raw });
      expect(result.error).toContain('none of the fields of output type "qa_answer"');
    }
    // A stray open brace is an object cut off before it began: not an answer either way.
    for (const raw of ['{', '}{']) expect(parseStructuredOutput(raw, 'qa_answer'), raw).toMatchObject({ success: false, parsedAs: 'failed', data: {}, truncated: true });
  });

  it('reports wrong types as warnings, not as a failure', () => {
    const result = parseStructuredOutput('{"answer": 42, "citations": "[1]", "confidence": "certain"}', 'qa_answer');

    expect(result.success).toBe(true);
    expect(result.parsedAs).toBe('exact');
    expect(result.data).toEqual({ answer: 42, citations: '[1]', confidence: 'certain' });
    expect(result.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^answer: must be string/), expect.stringMatching(/^citations: must be array/), expect.stringMatching(/^confidence: must be equal to one of/)]));
  });

  it('accepts any text for the text output type and returns no data', () => {
    for (const type of ['text', undefined] as const) {
      expect(parseStructuredOutput('Just prose, {not json', type)).toEqual({ success: true, data: {}, parsedAs: 'text', error: '', warnings: [], rawOutput: 'Just prose, {not json', truncated: false });
    }
  });

  it('fails with a clear error for an unknown output type name', () => {
    const result = parseStructuredOutput(JSON.stringify(answer), 'qa_anwser');

    expect(result.success).toBe(false);
    expect(result.parsedAs).toBe('failed');
    expect(result.error).toMatch(/Unknown output type "qa_anwser"/);
    expect(result.error).toContain('qa_answer');
    expect(result.rawOutput).toBe(JSON.stringify(answer));
  });

  it('keeps the answer and warns instead of throwing when a declared schema is not valid JSON Schema', () => {
    const broken: OutputType = { name: 'broken', schema: { type: 'object', properties: { a: { type: 'nope' }, b: 'string' as unknown as object } } };

    const result = parseStructuredOutput('{"a": 1, "b": 2}', broken);

    expect(result).toMatchObject({ success: true, parsedAs: 'exact', data: { a: 1, b: 2 } });
    expect(result.warnings).toEqual([expect.stringMatching(/^\(schema\): cannot be checked/)]);
  });

  it('never throws on garbage input', () => {
    const huge = `${'{"a": ['.repeat(2_000)}${'x'.repeat(200_000)}`;
    const weird = ['', ' ', '{', '}', '}{', '{{}}', 'null', 'true', '42', '"string"', '[1,2]', '[{"answer": "x"}]', '```json\n```', '```', '\u0000\uFFFF', '{"a": undefined}', '{"__proto__": {"x": 1}}', 'NaN', '{"answer": "x"} {"answer": "y"}', huge];
    for (const raw of weird) {
      for (const type of ['qa_answer', 'data_check_report', 'text', 'no_such_type']) {
        let result: ReturnType<typeof parseStructuredOutput> | undefined;
        expect(() => (result = parseStructuredOutput(raw, type)), `${type} ${JSON.stringify(raw.slice(0, 40))}`).not.toThrow();
        expect(result!.rawOutput).toBe(raw);
        expect(typeof result!.data).toBe('object');
        if (!result!.success) expect(result!.error).not.toBe('');
      }
    }
  });

  it('fails on JSON that is not an object', () => {
    for (const raw of ['null', '[1,2]', '"text"', '42']) expect(parseStructuredOutput(raw, 'qa_answer')).toMatchObject({ success: false, parsedAs: 'failed' });
  });
});
