import { describe, expect, it } from 'vitest';
import { callbackResult, cardOf, formFromParams, hasContinuityCorrection, requestFromForm } from './calculator-form';

describe('formFromParams', () => {
  it('fills the form from the link over the usual defaults', () => {
    const form = formFromParams({ conversationId: 'c1', cardId: 'calc', design: 'two_means', alpha: '0.025', meanDiff: '5', sd: '10' });
    expect(form).toMatchObject({ design: 'two_means', alpha: '0.025', power: '0.8', sides: '2', ratio: '1', dropout: '0', meanDiff: '5', sd: '10', hypothesis: 'superiority' });
    expect(form).not.toHaveProperty('conversationId');
  });

  it('opens two means when the link names no design or one it does not know', () => {
    expect(formFromParams({}).design).toBe('two_means');
    expect(formFromParams({ design: 'cluster' }).design).toBe('two_means');
  });
});

describe('cardOf', () => {
  it('is the card only when both the protocol and the card are named', () => {
    expect(cardOf({ conversationId: 'c1', cardId: 'calc' })).toEqual({ conversationId: 'c1', cardId: 'calc' });
    expect(cardOf({ conversationId: 'c1' })).toBeNull();
    expect(cardOf({})).toBeNull();
  });
});

describe('requestFromForm', () => {
  it("sends the design's own fields and the common ones as numbers, not another design's", () => {
    const form = { ...formFromParams({ design: 'two_proportions', p1: '0.3', p2: '0.45', meanDiff: '5' }), dropout: '0.1' };
    expect(requestFromForm(form)).toEqual({
      request: { design: 'two_proportions', hypothesis: 'superiority', alpha: 0.05, power: 0.8, sides: 2, ratio: 1, dropout: 0.1, p1: 0.3, p2: 0.45 },
      invalid: [],
    });
  });

  it('leaves blank inputs out and names the ones that are not numbers', () => {
    const form = { ...formFromParams({ design: 'two_means', effectSize: '0.5' }), ratio: '', power: 'high' };
    const { request, invalid } = requestFromForm(form);
    expect(request).toEqual({ design: 'two_means', hypothesis: 'superiority', alpha: 0.05, sides: 2, dropout: 0, effectSize: 0.5 });
    expect(invalid).toEqual(['power']);
  });

  it('sends the margin only for a non-inferiority or equivalence hypothesis', () => {
    const base = formFromParams({ design: 'two_means', meanDiff: '0', sd: '10', margin: '-3' });
    expect(requestFromForm(base).request).not.toHaveProperty('margin');
    expect(requestFromForm({ ...base, hypothesis: 'non_inferiority' }).request).toMatchObject({ hypothesis: 'non_inferiority', margin: -3 });
  });
});

describe('the continuity correction', () => {
  it('is sent for two proportions under superiority when ticked, and opens ticked from the link', () => {
    const form = formFromParams({ design: 'two_proportions', p1: '0.5', p2: '0.75', continuityCorrection: 'true' });
    expect(form.continuityCorrection).toBe('true');
    expect(requestFromForm(form).request).toMatchObject({ design: 'two_proportions', continuityCorrection: true });
    expect(requestFromForm({ ...form, continuityCorrection: '' }).request).not.toHaveProperty('continuityCorrection');
  });

  it('is never sent where the calculator has none: other designs and hypotheses', () => {
    const ticked = formFromParams({ design: 'two_proportions', p1: '0.5', p2: '0.75', continuityCorrection: 'true', margin: '-0.1' });
    expect(hasContinuityCorrection(ticked)).toBe(true);
    expect(hasContinuityCorrection({ ...ticked, hypothesis: 'non_inferiority' })).toBe(false);
    expect(requestFromForm({ ...ticked, hypothesis: 'non_inferiority' }).request).not.toHaveProperty('continuityCorrection');
    expect(requestFromForm({ ...ticked, design: 'two_means', meanDiff: '5', sd: '10' }).request).not.toHaveProperty('continuityCorrection');
  });
});

describe('callbackResult', () => {
  it('sends the answer with the inputs (alpha and power among them) it was computed from', () => {
    const request = { design: 'time_to_event', alpha: 0.05, power: 0.8, sides: 2, hazardRatio: 0.7, eventProbability: 0.4 };
    const response = { perGroup: [260, 260] as [number, number], total: 520, events: 207, method: 'Schoenfeld', assumptions: ['proportional hazards'] };
    expect(callbackResult(request, response)).toEqual({ total: 520, perGroup: [260, 260], method: 'Schoenfeld', assumptions: ['proportional hazards'], inputs: request });
  });
});
