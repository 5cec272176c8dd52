/**
 * What the trial assistant's router says about one chat message: which intents it holds, in the order to
 * handle them. The chat dispatcher (src/chat) acts on these labels, so memory never imports the areas it
 * routes to.
 */
export const INTENT_TYPES = ['qc_task', 'data_question', 'history_question', 'memory_instruction', 'write_request', 'chit_chat', 'unclear'] as const;
export type IntentType = (typeof INTENT_TYPES)[number];

export const MEMORY_FACT_SECTIONS = ['preferences', 'state', 'prohibitions'] as const;
export type MemoryFactSection = (typeof MEMORY_FACT_SECTIONS)[number];

export interface Intent {
  type: IntentType;
  /** The part of the message this intent is about, in the user's words (the whole message for one intent). */
  text: string;
  /** qc_task: records named in the message ("P003", "record 12"), and the skill id when one of the offered skills is named. */
  recordIds?: string[];
  skillId?: string;
  /** memory_instruction: the fact to remember as one short line in the user's own words (hot memory refuses any other), and where it belongs. */
  fact?: { section: MemoryFactSection; text: string };
}

export interface RoutedMessage {
  intents: Intent[];
  by: 'model' | 'rules';
  language: 'zh' | 'en';
  /** Set when the rules answered although a model was asked (or could not be): why. */
  fallbackReason?: string;
  /** The kind of that reason, for the user: the model failed, or it answered in a shape that could not be used. */
  fallback?: RoutingFallback;
}

export type RoutingFallback = 'model_unavailable' | 'answer_unusable' | 'empty_message';

/** A QC skill the user may name ("run 核心数据核查 on S003"). */
export interface SkillOption {
  id: string;
  name: string;
  description?: string;
}

export interface RouteOptions {
  skills: ReadonlyArray<SkillOption>;
}

/**
 * Seed 000 V2.9 handles one intent at a time and summarises them in order; past five the answer stops being
 * short and the message is better asked in parts.
 */
export const MAX_INTENTS = 5;

export { detectLanguage } from '../../core/language.js';
