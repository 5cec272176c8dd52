import { ClinAgentError } from '../../core/errors.js';

/**
 * How much of a conversation goes back to the model before the new user message.
 * - `full`: every turn; `maxTokens`, when set, is a safety cap that drops the oldest turns rather than overflow
 *   the model's context window (scenario files default to 8000).
 * - `sliding_window`: the last `maxTurns` turns and/or at most `maxTokens` tokens of them.
 * - `summary`: the last `keepTurns` turns (and at most `maxTokens` tokens of them) verbatim, and everything
 *   older as one summary written by the model.
 * A turn is one row of the log: a user, assistant or tool message. Windows never start between an assistant
 * turn that calls tools and the tool turns answering it. `textOnly` keeps only the user's and the assistant's
 * texts (no tool calls, no tool results): for an agent that reads data again through its tools rather than trust
 * old output, and whose prompts must not carry earlier records.
 */
export type HistoryStrategy = (
  | { strategy: 'full'; maxTokens?: number }
  /** One-off agents in code (a router, a judge): nothing of any conversation reaches them. */
  | { strategy: 'none' }
  | { strategy: 'sliding_window'; maxTurns?: number; maxTokens?: number }
  | { strategy: 'summary'; keepTurns: number; maxTokens?: number }
) & { textOnly?: boolean };

/** The `history:` block of a scenario file, as its schema (scenarios/schema.ts) parsed it. */
interface HistoryFileBlock {
  strategy: 'full' | 'sliding_window' | 'summary';
  max_turns?: number;
  max_tokens: number;
  keep_turns?: number;
}

/** Maps a scenario file's `history:` block to a strategy; the schema has already checked the combinations. */
export function historyStrategyFromFile(block: HistoryFileBlock): HistoryStrategy {
  switch (block.strategy) {
    case 'sliding_window':
      return { strategy: 'sliding_window', maxTurns: block.max_turns, maxTokens: block.max_tokens };
    case 'summary':
      return { strategy: 'summary', keepTurns: block.keep_turns ?? 0, maxTokens: block.max_tokens };
    default:
      return { strategy: 'full', maxTokens: block.max_tokens };
  }
}

/** A strategy built in code (not from a file) is checked here, with every problem named at once. */
export function assertHistoryStrategy(strategy: HistoryStrategy): void {
  const problems: string[] = [];
  const positive = (value: unknown, field: string) => {
    if (value !== undefined && !(Number.isInteger(value) && (value as number) > 0)) problems.push(`${field}: must be a positive integer, got ${JSON.stringify(value)}`);
  };
  if (!['full', 'sliding_window', 'summary', 'none'].includes(strategy?.strategy)) {
    problems.push(`strategy: must be "full", "sliding_window", "summary" or "none", got ${JSON.stringify(strategy?.strategy)}`);
  } else if (strategy.strategy !== 'none') {
    positive(strategy.maxTokens, 'maxTokens');
    if (strategy.textOnly !== undefined && typeof strategy.textOnly !== 'boolean') problems.push(`textOnly: must be true or false, got ${JSON.stringify(strategy.textOnly)}`);
    if (strategy.strategy === 'sliding_window') {
      positive(strategy.maxTurns, 'maxTurns');
      if (strategy.maxTurns === undefined && strategy.maxTokens === undefined) problems.push('sliding_window: set maxTurns, maxTokens or both');
    }
    if (strategy.strategy === 'summary') {
      if (strategy.keepTurns === undefined) problems.push('keepTurns: required for the summary strategy');
      else positive(strategy.keepTurns, 'keepTurns');
    }
  }
  if (problems.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `The history strategy is not valid:\n- ${problems.join('\n- ')}`, { field: 'history', problems });
  }
}
