import type { SampleSizeRequest, SampleSizeResponse } from '../../../api';

/**
 * The sample-size calculator's form as text inputs, read from and written to the URL, and turned into the body
 * of POST /api/tools/sample-size. The server checks the numbers (one 400 naming the field); the form only
 * refuses what is not a number at all, so a typo is caught before a round trip.
 */
export const DESIGNS = ['two_means', 'two_proportions', 'one_proportion', 'time_to_event'] as const;
export type Design = (typeof DESIGNS)[number];

export const HYPOTHESES = ['superiority', 'non_inferiority', 'equivalence'] as const;

/** The inputs every design has. */
export const COMMON_FIELDS = ['alpha', 'power', 'sides', 'ratio', 'dropout'] as const;

/** Each design's own inputs; two_means takes meanDiff and sd, or effectSize alone. */
export const DESIGN_FIELDS: Readonly<Record<Design, readonly string[]>> = {
  two_means: ['meanDiff', 'sd', 'effectSize'],
  two_proportions: ['p1', 'p2'],
  one_proportion: ['p0', 'p1'],
  time_to_event: ['hazardRatio', 'eventProbability'],
};

const NUMBER_FIELDS = new Set<string>([...COMMON_FIELDS, 'margin', ...Object.values(DESIGN_FIELDS).flat()]);

export type CalculatorForm = Record<string, string> & { design: Design; hypothesis: string };

/** A researcher's usual starting point when the link names nothing else. */
const DEFAULTS: Record<string, string> = { alpha: '0.05', power: '0.8', sides: '2', ratio: '1', dropout: '0', hypothesis: 'superiority' };

function isDesign(value: string | undefined): value is Design {
  return (DESIGNS as readonly string[]).includes(value ?? '');
}

/** The Fleiss-Tytun-Ury continuity correction: the calculator has it for two proportions under superiority only. */
export function hasContinuityCorrection(form: Pick<CalculatorForm, 'design' | 'hypothesis'>): boolean {
  return form.design === 'two_proportions' && form.hypothesis === 'superiority';
}

/** The form the link opens: its parameters over the defaults; parameters the form has no input for are dropped. */
export function formFromParams(params: Record<string, string>): CalculatorForm {
  const form: Record<string, string> = { ...DEFAULTS };
  for (const [key, value] of Object.entries(params)) if (NUMBER_FIELDS.has(key) || key === 'hypothesis') form[key] = value;
  // A checkbox: ticked is "true", as the card's link and the form both write it.
  form.continuityCorrection = params.continuityCorrection === 'true' ? 'true' : '';
  return { ...form, design: isDesign(params.design) ? params.design : 'two_means', hypothesis: form.hypothesis ?? 'superiority' };
}

/** The card that opened the calculator, when it did: its result can go back into that protocol. */
export function cardOf(params: Record<string, string>): { conversationId: string; cardId: string } | null {
  return params.conversationId && params.cardId ? { conversationId: params.conversationId, cardId: params.cardId } : null;
}

export interface RequestBuild {
  request: SampleSizeRequest;
  /** Inputs that are not numbers. */
  invalid: string[];
}

/** The request for the chosen design: its own fields and the common ones; blank optional inputs are left out. */
export function requestFromForm(form: CalculatorForm): RequestBuild {
  const request: Record<string, unknown> = { design: form.design, hypothesis: form.hypothesis };
  const invalid: string[] = [];
  const fields = [...COMMON_FIELDS, ...DESIGN_FIELDS[form.design], ...(form.hypothesis === 'superiority' ? [] : ['margin'])];
  for (const field of fields) {
    const typed = (form[field] ?? '').trim();
    if (typed === '') continue;
    const number = Number(typed);
    if (Number.isFinite(number)) request[field] = number;
    else invalid.push(field);
  }
  if (hasContinuityCorrection(form) && form.continuityCorrection === 'true') request.continuityCorrection = true;
  return { request: request as SampleSizeRequest, invalid };
}

/**
 * What "Use in protocol" sends as the card's result, keyed as the card's resultMapping reads it
 * (agents/protocol_agent.v1.yaml): the calculator's answer, and the inputs it was computed from (alpha and power
 * among them), so the protocol records them and the card opens pre-filled with them next time.
 */
export function callbackResult(request: SampleSizeRequest, response: SampleSizeResponse): Record<string, unknown> {
  const { total, perGroup, method, assumptions } = response;
  return { total, perGroup, method, assumptions, inputs: request };
}
