import type { AgentEvent, AgentEventSink } from '../../../runtime/loop/events.js';
import type { TraceScope } from '../../../core/trace/store.js';
import type { ConsultState } from '../consult-state.js';
import { patientExclusions, type PatientExclusions } from './patient-exclusions.js';
import { withoutExcludedDrugs, withoutExcludedOptions, type RemovedDrug } from './without-excluded-drugs.js';

/** Everything the patient has written in this consult, the message being answered included once it is a turn. */
export function patientWordsOf(state: Pick<ConsultState, 'turns'>, message?: string): string[] {
  const said = state.turns.filter((turn) => turn.role === 'user').map((turn) => turn.content);
  return message === undefined ? said : [...said, message];
}

const TERMINATOR = /[。！？；;!?\n]/;
const HAN = /\p{Script=Han}/u;

/** Where the complete sentences of `text` end (after the last terminator); a full stop must be followed by something. */
function completeUpTo(text: string): number {
  for (let at = text.length - 1; at >= 0; at -= 1) {
    const char = text[at]!;
    if (TERMINATOR.test(char)) return at + 1;
    if (char === '.' && at + 1 < text.length && (/\s/.test(text[at + 1]!) || HAN.test(text[at + 1]!))) return at + 1;
  }
  return 0;
}

/**
 * The patient watches a reply being written, so the check cannot wait for the reply to end: text is held back to
 * the end of its sentence and each sentence is checked before it is passed on. What is held is passed on when the
 * round ends (any other event). The reply the request returns is checked again with what the turn recorded.
 */
export function excludedDrugStream(sink: AgentEventSink, exclusions: PatientExclusions): AgentEventSink {
  if (exclusions.drugs.length === 0) return sink;
  let held = '';
  let last: Extract<AgentEvent, { type: 'text_delta' }> | undefined;
  const pass = (text: string) => {
    if (!text || !last) return;
    const lead = /^\s*/.exec(text)![0];
    const trail = /\s*$/.exec(text)![0];
    const checked = withoutExcludedDrugs(text, exclusions);
    sink({ ...last, text: checked.removed.length ? `${lead}${checked.text}${trail}` : text });
  };
  const release = () => {
    pass(held);
    held = '';
  };
  return (event) => {
    if (event.type !== 'text_delta') {
      release();
      return sink(event);
    }
    if (last && (last.round !== event.round || last.part !== event.part)) release();
    last = event;
    held += event.text;
    const cut = completeUpTo(held);
    if (cut === 0) return;
    pass(held.slice(0, cut));
    held = held.slice(cut);
  };
}

/**
 * The turn's reply checked against this patient's exclusions, read from what the turn recorded (its medical context
 * and every message of the patient): each sentence naming an excluded drug becomes a warning, each quick option
 * naming one is dropped, and the trace gets a `medication_safety` span saying what was taken out and why. A
 * diagnosis is kept as the patient saw it, so the dossier's summary is the diagnosis and not a later reply.
 */
export async function checkedTurn<T extends { state: ConsultState }>(outcome: T, trace: TraceScope): Promise<T> {
  const state = outcome.state;
  const reply = state.lastReply;
  if (!reply || reply.traceId !== trace.traceId) return outcome;
  const exclusions = patientExclusions(state.medicalContext, patientWordsOf(state));
  const response = withoutExcludedDrugs(reply.response, exclusions);
  const options = withoutExcludedOptions(reply.quickOptions, exclusions);
  const readyReason = typeof state.decision?.ready_reason === 'string' ? withoutExcludedDrugs(state.decision.ready_reason, exclusions) : undefined;
  const removed: RemovedDrug[] = [...response.removed, ...options.removed, ...(readyReason?.removed ?? [])];
  const checked: ConsultState = {
    ...state,
    ...(reply.action === 'diagnose' ? { diagnosis: { summary: response.text, readyReason: readyReason?.text, traceId: reply.traceId } } : {}),
  };
  if (removed.length) {
    const last = state.turns.at(-1);
    const turns = last?.role === 'assistant' && last.content === reply.response ? [...state.turns.slice(0, -1), { ...last, content: response.text, quickOptions: options.options }] : state.turns;
    Object.assign(checked, { lastReply: { ...reply, response: response.text, quickOptions: options.options }, currentResponse: response.text, quickOptions: options.options, turns });
    const facts = exclusions.facts;
    await trace.span('step', 'medication_safety', { pregnant: facts.pregnant, breastfeeding: facts.breastfeeding, age: facts.age, allergies: facts.allergies }, async () => ({ removed }), (result) => ({ output: result }));
  }
  return { ...outcome, state: checked };
}
