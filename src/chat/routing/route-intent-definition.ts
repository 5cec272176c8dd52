import { agentId, jsonAnswer, type AgentDefinition, type AnswerCheck } from '../../runtime/definitions/index.js';
import { buildRouterMessages, intentsOf, ROUTER_PARSER_SCHEMA, routerAnswerSchema } from './route-intent-prompt.js';
import type { Intent, SkillOption } from './route-intent-types.js';

interface RouterInput {
  /** The message to classify, already cut to what the classifier reads. */
  message: string;
  skills: ReadonlyArray<SkillOption>;
}

/**
 * The trial assistant's router (seed 002 intent detection): one JSON answer, no tools, and one correction when the
 * answer cannot be used; after that the keyword rules route the message.
 */
/** Its id in the registry, typed: `agents.get(ROUTE_INTENT_AGENT)`. */
export const ROUTE_INTENT_AGENT = agentId<RouterInput, Intent[]>('route_intent');

export const ROUTE_INTENT_DEFINITION: AgentDefinition<RouterInput, Intent[]> = {
  id: ROUTE_INTENT_AGENT,
  name: 'Intent routing',
  description: 'Labels the parts of a chat message sent to the trial assistant (QC task, data question, memory instruction, ...).',
  sourceFile: 'builtin:src/memory/route-intent-definition.ts',
  instructions: (input) => buildRouterMessages(input.message, input.skills),
  tools: [],
  decision: { mode: 'native' },
  output: { name: 'intent_routing' },
  answer: jsonAnswer(routerAnswerSchema, {
    name: 'intent_routing',
    parserSchema: ROUTER_PARSER_SCHEMA,
    missingFields: 'fill',
    map: (answer, input) => intentsOf(answer, input?.message ?? '', input?.skills ?? []),
  }),
  answerShape: '{"intents": [{"type": "...", "text": "...", ...}]}, as described',
  // Two model calls: the answer, and one correction when it cannot be used.
  stop: { maxRounds: 2 },
  history: { strategy: 'none' },
  model: { temperature: 0, jsonMode: true },
  engine: { type: 'builtin' },
};

/** Reads one answer of the router as the loop does: the intents, or the problems a correction sends back. */
export function readRouterAnswer(content: string, message: string, skills: ReadonlyArray<SkillOption>): AnswerCheck<Intent[]> {
  return ROUTE_INTENT_DEFINITION.answer!.read({ content }, { message, skills });
}
