import type { RecordedRequest, ScriptedStep } from '../scripted-model.js';

/** The QC skill's soft rule; the model's verdict is always "plausible", so the record's queries come from its data. */
export const CHAOS_SOFT_INSTRUCTION = 'Judge whether the adverse event text is plausible for the recorded vital signs.';
/** The durable agent that waits for a person: it asks one question, then advises once it has the answer. */
export const CHAOS_INTAKE_PROMPT = 'Ask the patient how long the symptom has lasted, then advise.';
export const CHAOS_ANSWER_PREFIX = 'answer-';

/**
 * How long each answer takes: long enough that kills land while a model call is in flight (a run mid-node), short
 * enough that the work keeps moving.
 */
const DELAY_MS = 150;

const textOf = (request: RecordedRequest): string => JSON.stringify(request.body?.messages ?? []);

/**
 * One scripted model for the three kinds of work at once, answering each request from what it asks: the QC judge,
 * the intake agent (ask, or advise once a person answered), and the consult (a follow-up question, no tools, so it
 * runs the same on PostgreSQL, which has no knowledge base).
 */
export function chaosModelAnswer(request: RecordedRequest): ScriptedStep {
  const text = textOf(request);
  if (text.includes(CHAOS_SOFT_INSTRUCTION.slice(0, 40))) {
    return { reply: JSON.stringify({ passed: true, reason: 'plausible', confidence: 0.9, evidence: 'ae_text: none' }), delayMs: DELAY_MS };
  }
  if (text.includes(CHAOS_INTAKE_PROMPT)) {
    const answered = text.includes(CHAOS_ANSWER_PREFIX);
    return {
      reply: JSON.stringify(answered ? { action: 'respond', answer: 'See your doctor this week.' } : { action: 'ask', question: 'How long has the cough lasted?' }),
      delayMs: DELAY_MS,
    };
  }
  return {
    reply: JSON.stringify({ thought: 'Need the duration first.', action: 'respond', response: 'How long have you had it?', quick_options: ['Days', 'Weeks'], medical_context_update: {} }),
    delayMs: DELAY_MS,
  };
}
