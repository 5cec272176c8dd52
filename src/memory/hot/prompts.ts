import type { ChatMessage } from '../../core/llm/types.js';
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../../core/llm/untrusted-data.js';
import type { OutputType } from '../../core/structured/output-types.js';
import type { HotMemoryLine } from '../types.js';

/**
 * The two prompts of hot-memory upkeep (seed 002): the daily distillation of the conversation log into facts,
 * and the pruning that condenses the memory when it outgrows its cap. In English, so one prompt serves every
 * model; the facts stay in the language the users wrote in.
 */

const SECTIONS_EXPLAINED =
  'The hot memory of a clinical trial project is a short document the trial assistant reads before every answer. It has three sections: "preferences" (how this project\'s users want answers and work done), "state" (the current state of the project: phase, enrolment, decisions in force, next milestones) and "prohibitions" (what the assistant must never do or say in this project).';

const NO_IDENTIFIERS =
  'Never write personal identifiers into the memory: no names of people, phone numbers, ID card or passport numbers, medical record numbers, email or postal addresses, dates of birth. Say "the PI" or "the CRC" instead of a name.';

export const DISTILL_OUTPUT: OutputType = {
  name: 'memory_facts',
  schema: {
    type: 'object',
    properties: {
      facts: {
        type: 'array',
        items: {
          type: 'object',
          properties: { section: { type: 'string', enum: ['preferences', 'state', 'prohibitions'] }, text: { type: 'string' }, source: { type: 'string' } },
          required: ['section', 'text'],
        },
      },
    },
    required: ['facts'],
  },
};

export const PRUNE_OUTPUT: OutputType = {
  name: 'memory_condensed',
  schema: {
    type: 'object',
    properties: {
      lines: {
        type: 'array',
        items: {
          type: 'object',
          properties: { section: { type: 'string', enum: ['preferences', 'state', 'prohibitions'] }, text: { type: 'string' }, from: { type: 'array', items: { type: 'integer' } } },
          required: ['section', 'text'],
        },
      },
    },
    required: ['lines'],
  },
};

export interface LabelledText {
  /** `T3` for a turn, `F1` for feedback: short labels the model cites instead of long ids. */
  label: string;
  text: string;
}

export function buildDistillMessages(input: { memory: string; turns: readonly LabelledText[]; feedback: readonly LabelledText[] }): ChatMessage[] {
  const system = [
    `You distil a clinical trial project's conversation log into its hot memory. ${SECTIONS_EXPLAINED}`,
    'From the conversation turns and the answer feedback below, extract only durable facts for one of the three sections that the current memory does not already hold. Skip one-off questions, greetings, and details that matter for a single answer only. A thumbs-down with a comment often states a preference or a prohibition.',
    "Take facts only from what a person wrote (a user turn, or a feedback comment), never from the assistant's answers. Write each fact as one short line (at most 25 words) in that person's own words: copy or shorten what they wrote, in their language; never add a word, translate or rephrase. A fact whose words are not in the turn or comment it cites is refused.",
    NO_IDENTIFIERS,
    DATA_NOT_INSTRUCTIONS,
    'Reply with one JSON object only: {"facts": [{"section": "preferences" | "state" | "prohibitions", "text": "...", "source": "T3"}]}, where source is the label of the turn ([T3]) or feedback ([F1]) the fact comes from. Reply {"facts": []} when there is nothing new.',
  ];
  const parts = [`Current hot memory:\n${dataBlock('hot_memory', input.memory || '(empty)')}`];
  parts.push(`Conversation turns since the last distillation, oldest first:\n${dataBlock('conversation', input.turns.length ? input.turns.map(labelled).join('\n\n') : '(none)')}`);
  parts.push(`Answer feedback not read yet:\n${dataBlock('feedback', input.feedback.length ? input.feedback.map(labelled).join('\n\n') : '(none)')}`);
  return [
    { role: 'system', content: system.join('\n\n') },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

export function buildPruneMessages(input: { lines: readonly HotMemoryLine[]; maxTokens: number; targetTokens: number }): ChatMessage[] {
  const system = [
    `You condense the hot memory of a clinical trial project, which has grown past its cap of ${input.maxTokens} tokens. ${SECTIONS_EXPLAINED}`,
    `Condense it into fewer, shorter lines, about ${input.targetTokens} tokens in all: merge lines that say the same thing, drop a past state that a later line replaces, shorten the wording. Keep every prohibition: merge or shorten them, never drop what they forbid. Add no new facts. Keep the language of each line.`,
    NO_IDENTIFIERS,
    DATA_NOT_INSTRUCTIONS,
    'Reply with one JSON object only: {"lines": [{"section": "preferences" | "state" | "prohibitions", "text": "...", "from": [1, 4]}]}, where from lists the numbers of the input lines the line is made from.',
  ];
  const numbered = input.lines.map((line, i) => `[${i + 1}] (${line.section}) ${line.text}`).join('\n');
  return [
    { role: 'system', content: system.join('\n\n') },
    { role: 'user', content: `The memory's lines, numbered:\n${dataBlock('hot_memory', numbered)}` },
  ];
}

function labelled(item: LabelledText): string {
  return `[${item.label}] ${item.text}`;
}
