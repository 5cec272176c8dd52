import type { StopReason } from '../runtime/loop/index.js';

/** How a question ended: the model's answer, or the limit that stopped it (seed 000 section 5.3). */
export type InvestigateEnding = 'answer' | 'max_rounds' | 'token_budget' | 'error_breaker';

/**
 * What the user sees when a limit ends the run: seed 000's messages, word for word in Chinese, with English
 * equivalents. They never say what the model was thinking, only what the user can do next.
 */
export const ENDING_MESSAGES: Record<Exclude<InvestigateEnding, 'answer'>, Record<'zh' | 'en', string>> = {
  token_budget: {
    zh: '抱歉,这个问题比较复杂,请尝试更具体的描述。',
    en: 'Sorry, this question is too complex to answer within my limits. Please ask something more specific.',
  },
  error_breaker: {
    zh: '抱歉,我遇到了一些技术问题,无法获取相关信息。请稍后重试或联系管理员。',
    en: 'Sorry, I ran into a technical problem and could not get the information. Please try again later or contact your administrator.',
  },
  max_rounds: {
    zh: '抱歉,我无法在有限步骤内完成这个查询。请尝试更具体的问题。',
    en: 'Sorry, I could not finish this query within a limited number of steps. Please ask a more specific question.',
  },
};

/**
 * The ending for a stop reason of the loop. An answer cut off by the token limit is one too big for the limits, as
 * a spent budget is; anything else is a failure to get the data.
 */
export function endingOf(reason: StopReason): Exclude<InvestigateEnding, 'answer'> {
  if (reason === 'truncated') return 'token_budget';
  return reason === 'max_rounds' || reason === 'token_budget' ? reason : 'error_breaker';
}

export function endingMessage(ending: Exclude<InvestigateEnding, 'answer'>, language: 'zh' | 'en'): string {
  return ENDING_MESSAGES[ending][language];
}
