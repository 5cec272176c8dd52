import { describe, expect, it } from 'vitest';
import { checkVerdict } from './verdict.js';

describe('checkVerdict', () => {
  it('accepts a complete verdict, ignoring extra keys, and clamps confidence into 0..1', () => {
    const check = checkVerdict('{"passed": false, "reason": "r", "confidence": -0.2, "evidence": "e", "notes": "extra"}');
    expect(check).toMatchObject({ ok: true, parsedAs: 'exact', verdict: { passed: false, confidence: 0 } });
  });

  it('lists every missing or mistyped field as a path: message line, not a silently filled default', () => {
    const check = checkVerdict('{"reason": 42, "confidence": "high"}');
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems).toEqual(
      expect.arrayContaining(['passed: missing; this field is required', 'evidence: missing; this field is required', 'reason: must be string', 'confidence: must be number']),
    );
  });

  it('reports prose with no JSON as a root problem', () => {
    expect(checkVerdict('符合方案要求')).toMatchObject({ ok: false, parsedAs: 'failed', problems: [expect.stringMatching(/^\(root\): No JSON object found/)] });
  });
});
