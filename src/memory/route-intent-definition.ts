import type { AgentDefinition } from '../agent/definitions/index.js';
import { buildRouterMessages } from './route-intent-prompt.js';
import type { SkillOption } from './route-intent-types.js';

export interface RouterInput {
  /** The message to classify, already cut to what the classifier reads. */
  message: string;
  skills: ReadonlyArray<SkillOption>;
}

/**
 * The trial assistant's router (seed 002 intent detection): one JSON answer, no tools, and one correction when the
 * answer cannot be used; after that the keyword rules route the message.
 */
export const ROUTE_INTENT_DEFINITION: AgentDefinition<RouterInput> = {
  id: 'route_intent',
  name: 'Intent routing',
  description: 'Labels the parts of a chat message sent to the trial assistant (QC task, data question, memory instruction, ...).',
  sourceFile: 'builtin:src/memory/route-intent-definition.ts',
  instructions: (input) => buildRouterMessages(input.message, input.skills),
  tools: [],
  decision: { mode: 'native' },
  output: { name: 'intent_routing' },
  answerShape: '{"intents": [{"type": "...", "text": "...", ...}]}, as described',
  // Two model calls: the answer, and one correction when it cannot be used.
  stop: { maxRounds: 2 },
  history: { strategy: 'none' },
  model: { temperature: 0, jsonMode: true },
  engine: { type: 'builtin' },
};
