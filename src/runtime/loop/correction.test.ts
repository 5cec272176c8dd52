import { describe, expect, it } from 'vitest';
import { correctionMessage } from './correction.js';

describe('correctionMessage', () => {
  it('sends one problem a line, then the shape to answer with', () => {
    expect(correctionMessage(['passed: missing; this field is required', 'confidence: must be a number'], '{"passed": boolean}')).toEqual({
      role: 'user',
      content: 'Your answer could not be used:\npassed: missing; this field is required\nconfidence: must be a number\nReply with the corrected JSON object only: {"passed": boolean}.',
    });
  });

  it('asks for corrected JSON without a shape when the agent declares none', () => {
    expect(correctionMessage(['(root): No JSON object found']).content).toBe('Your answer could not be used:\n(root): No JSON object found\nReply with the corrected JSON object only.');
  });
});
