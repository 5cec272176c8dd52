import type { AgentDefinition } from './agent-definition.js';
import { outputAnswer, type AnswerSchema } from './answer-schema.js';

/** The answer schema a definition runs with: its own, or the one of its output type (YAML scenarios, stages). */
export function answerOf<I, O>(definition: AgentDefinition<I, O>): AnswerSchema<O, I> {
  // Without its own schema a definition's answer is the text its output type yields (O defaults to string).
  return definition.answer ?? (outputAnswer(definition.output, definition.decision) as unknown as AnswerSchema<O, I>);
}
