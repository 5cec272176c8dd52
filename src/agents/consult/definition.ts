import { z } from 'zod';
import type { AgentDefinition } from '../../runtime/definitions/agent-definition.js';
import { decisionAnswerSchema } from '../../runtime/definitions/answer-schema.js';
import { agentId } from '../../runtime/definitions/registry.js';
import type { ChatMessage } from '../../core/llm/types.js';
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../../core/llm/untrusted-data.js';
import type { MedicalContext } from './types.js';

/** Its id in the registry, typed: `agents.get(CONSULT_AGENT_ID)` is the consult's definition. */
export const CONSULT_AGENT_ID = agentId<ConsultTurnInput, ConsultDiagnosis>('dermatology_consult');

/**
 * The consult's instructions (seed 003 section 4): the model decides every step itself as one JSON decision, keeps
 * the medical context, and decides when it knows enough. No threshold in code says when to diagnose.
 */
const INSTRUCTIONS = `You are a careful dermatology consultant talking with a patient. Each round you decide your next step yourself and answer with ONE JSON object, nothing else:
- To use a tool: {"thought": "...", "action": "use_tool", "tool": "<tool name>", "tool_input": {...}, "medical_context_update": {...}}
- To ask a follow-up question or answer and wait for the patient: {"thought": "...", "action": "respond", "response": "<what you say>", "quick_options": ["<short answer>", ...], "medical_context_update": {...}}
- When you know enough to conclude: {"thought": "...", "action": "diagnose", "ready_reason": "<why you can conclude now>", "response": "<your assessment for the patient: the most likely condition, the differentials, what to do, when to see a doctor>", "medical_context_update": {...}}

Tools: search_medical_knowledge(query, specialty="dermatology") for facts about conditions and their differentials; assess_risk(symptoms, patient_info) for urgency; search_medication(condition, contraindications, patient_info) before naming any medicine (never name a drug it did not offer); analyze_skin_image(image_base64, context) when the patient attached an image (pass its reference, e.g. "attachment:1", as image_base64); generate_medical_dossier(patient_data) when the patient asks for a record of the consult.

Keep the medical context yourself in "medical_context_update" (it is merged into what you already know): symptoms, location, triggers, missing_info, suspected_conditions and image_findings as lists of short strings; duration as text ("3 days"); patient_info {age (a number of years), sex, pregnant (true/false), breastfeeding (true/false), allergies (a list of drug or class names)}. Ask one or two questions at a time, with quick_options the patient can tap. You decide when the information is sufficient; do not diagnose before you have it, and do not keep asking once you do. If a tool fails, continue: ask the patient in text instead. You are not a replacement for a doctor: say so when you conclude, and tell the patient to seek care at once for any alarming sign. Answer in the patient's language.
${DATA_NOT_INSTRUCTIONS}`;

interface ConsultTurnInput {
  /** What is known so far; the model's own record, shown back to it as data. */
  medicalContext: MedicalContext;
  /** The conversation so far, without a system message. */
  history: ChatMessage[];
  /** This turn's message, with its attachment references. */
  message: string;
}

/** The system prompt of every turn: the instructions and the medical context as it stands. */
function consultMessages(input: ConsultTurnInput): ChatMessage[] {
  return [
    { role: 'system', content: `${INSTRUCTIONS}\n\nWhat you have recorded so far:\n${dataBlock('medical_context', input.medicalContext)}` },
    ...input.history,
    { role: 'user', content: input.message },
  ];
}

/** Model calls and tokens a single patient message may take; the whole consult's budget is the service's. */
const CONSULT_TURN_LIMITS = { maxRounds: 8, tokenBudget: 24_000, errorBreaker: 3, attempts: 3 } as const;

/**
 * The decision that ends a consult (respond waits for the patient, use_tool runs a tool): a diagnosis the patient
 * can read. A conclusion without its assessment goes back to the model, which is asked for it, rather than being
 * shown as a stock sentence; the other fields are read tolerantly by the service (normalize-context.ts).
 */
const consultDiagnosisSchema = z.looseObject({
  action: z.literal('diagnose'),
  response: z.string().trim().min(1, 'required: your assessment for the patient (the most likely condition, what to do, when to see a doctor)'),
  ready_reason: z.string().optional(),
});

type ConsultDiagnosis = z.infer<typeof consultDiagnosisSchema>;

/**
 * The model's `medical_context_update` is read through one zod schema with coercion for every field
 * (normalize-context.ts) before anything reads it: the prompt asks for the shape, the schema does not count on it.
 */
export const CONSULT_DEFINITION: AgentDefinition<ConsultTurnInput, ConsultDiagnosis> = {
  id: CONSULT_AGENT_ID,
  name: 'Dermatology consult',
  description: 'A ReAct dermatology consult: it asks, looks up, assesses risk and concludes when it knows enough (seed 003).',
  sourceFile: 'builtin:src/agents/consult/definition.ts',
  kind: 'conversation',
  instructions: consultMessages,
  tools: ['search_medical_knowledge', 'assess_risk', 'search_medication'],
  // Bound to one consult: its uploaded images and its dossier.
  requestTools: ['analyze_skin_image', 'generate_medical_dossier'],
  decision: { mode: 'json', actions: ['use_tool', 'respond', 'diagnose'], toolAction: 'use_tool', waitOn: { respond: 'answer' } },
  output: { name: 'text' },
  answer: decisionAnswerSchema(consultDiagnosisSchema),
  answerShape: '{"thought": "...", "action": "use_tool" | "respond" | "diagnose", ...}',
  stop: CONSULT_TURN_LIMITS,
  history: { strategy: 'full' },
  model: { temperature: 0.2, jsonMode: true },
  engine: { type: 'builtin' },
};
