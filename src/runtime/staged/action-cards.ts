import { ClinAgentError } from '../../core/errors.js';
import type { ActionCardConfig, StageConfig } from './config.js';
import { conditionHolds } from './context-logic.js';
import { getPath, isPresent, setPath } from './context-paths.js';
import type { ActionCardPayload } from './types.js';

/**
 * Action cards (seed 001 section 2.4): a stage offers its `stage_enter` cards while it is current, a `condition`
 * card once its condition holds over the context, and a `manual` card when the user asks for a tool. A deep link
 * carries the conversation, the card and the context values its params name, so the page it opens is pre-filled.
 */
export function stageCards(stage: StageConfig, context: Record<string, unknown>, options: { conversationId: string; includeManual?: boolean }): ActionCardPayload[] {
  return stage.actionCards
    .map((card, index) => ({ card, index }))
    .filter(({ card }) => card.triggerType === 'stage_enter' || (card.triggerType === 'manual' && options.includeManual) || (card.triggerType === 'condition' && card.triggerCondition && conditionHolds(card.triggerCondition, context).holds))
    .map(({ card, index }) => payloadOf(card, index, context, options.conversationId));
}

function payloadOf(card: ActionCardConfig, index: number, context: Record<string, unknown>, conversationId: string): ActionCardPayload {
  const payload: ActionCardPayload = { cardId: card.cardId, title: card.title, description: card.description, iconType: card.iconType, actionType: card.actionType, priority: index + 1 };
  const params = filledParams(card, context);
  if (card.actionType === 'deep_link') {
    const query = new URLSearchParams({ conversationId, cardId: card.cardId });
    for (const [name, value] of Object.entries(params)) query.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    payload.actionUrl = `${String(card.actionPayload.url)}?${query.toString()}`;
  } else {
    payload.actionParams = { ...card.actionPayload, params };
  }
  return payload;
}

/** Each param names a context path; only the values present are sent (an empty field is not a pre-fill). */
function filledParams(card: ActionCardConfig, context: Record<string, unknown>): Record<string, unknown> {
  const params = (card.actionPayload.params ?? {}) as Record<string, string>;
  const filled: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(params)) {
    const value = getPath(context, path);
    if (isPresent(value)) filled[name] = value;
  }
  return filled;
}

/**
 * The action callback: the card's `resultMapping` says which result keys go where in the context. Keys it does not
 * map are ignored (a calculator answers more than the protocol keeps); a result that maps nothing is refused,
 * naming the keys the card expects, so a wrong card id or a wrong result is not silently accepted.
 */
export function applyCardResult(card: ActionCardConfig, result: Record<string, unknown>, context: Record<string, unknown>): { context: Record<string, unknown>; applied: Record<string, unknown> } {
  const mapping = card.resultMapping ?? {};
  if (!Object.keys(mapping).length) {
    throw new ClinAgentError('VALIDATION_FAILED', `Card "${card.cardId}" takes no result back (it has no resultMapping); its action is done on the page it opens.`, { field: 'cardId' });
  }
  let next = context;
  const applied: Record<string, unknown> = {};
  for (const [key, path] of Object.entries(mapping)) {
    const value = getPath(result, key);
    if (!isPresent(value)) continue;
    next = setPath(next, path, value);
    applied[path] = value;
  }
  if (!Object.keys(applied).length) {
    throw new ClinAgentError('VALIDATION_FAILED', `The result for card "${card.cardId}" has none of the values the card records (${Object.keys(mapping).join(', ')}). Send the result of its action, e.g. the calculator's answer.`, { field: 'result' });
  }
  return { context: next, applied };
}
