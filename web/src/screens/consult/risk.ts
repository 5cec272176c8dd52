import type { RiskLevel } from '../../api';

/**
 * At a moderate, high or urgent level the server puts the level's advice above the model's answer, in the patient's
 * language, marked with a warning sign and set apart by a blank line (src/agents/consult/risk/level-guidance.ts).
 * The banner repeats that advice in the reply's own words, so it says exactly what the patient was told.
 */
const WARNING_SIGN = '⚠️';

export function leadAdvice(response: string | undefined): string | null {
  const text = response?.trim() ?? '';
  if (!text.startsWith(WARNING_SIGN)) return null;
  const advice = text.slice(WARNING_SIGN.length).split(/\n\s*\n/)[0]!.trim();
  return advice || null;
}

/** The banner's colour and role: urgent interrupts (an alert), the other levels are status. */
export function riskTone(level: RiskLevel): { className: string; role: 'alert' | 'status' } {
  switch (level) {
    case 'urgent':
      return { className: 'risk-banner risk-urgent', role: 'alert' };
    case 'high':
      return { className: 'risk-banner risk-high', role: 'status' };
    case 'moderate':
      return { className: 'risk-banner risk-moderate', role: 'status' };
    default:
      return { className: 'risk-banner risk-low', role: 'status' };
  }
}

/** The reply the banner's advice comes from: the last answer the consult gave. */
export function lastAnswer(turns: ReadonlyArray<{ role: string; content: string }>): string | undefined {
  return [...turns].reverse().find((turn) => turn.role === 'assistant')?.content;
}
