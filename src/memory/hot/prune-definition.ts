import type { AgentDefinition } from '../../agent/definitions/index.js';
import type { HotMemoryLine } from '../types.js';
import { buildPruneMessages, PRUNE_OUTPUT } from './prompts.js';

export interface PruneInput {
  lines: readonly HotMemoryLine[];
  maxTokens: number;
  targetTokens: number;
}

/**
 * Hot-memory pruning (seed 002 §5.1): two tries at a condensed memory, the second told what was wrong with the
 * first. An unreachable model is one more failed try: the fallback is a notice to the admin, not a dead job.
 */
export const PRUNE_DEFINITION: AgentDefinition<PruneInput> = {
  id: 'memory_prune',
  name: 'Hot-memory pruning',
  description: "Condenses a project's hot memory when it outgrows its token cap, keeping every prohibition.",
  sourceFile: 'builtin:src/memory/hot/prune-definition.ts',
  instructions: buildPruneMessages,
  tools: [],
  decision: { mode: 'native' },
  output: PRUNE_OUTPUT,
  answerShape: '{"lines": [{"section": "preferences" | "state" | "prohibitions", "text": "...", "from": [1, 4]}]}',
  stop: { attempts: 2, modelErrorsAreAttempts: true },
  history: { strategy: 'none' },
  model: { temperature: 0, jsonMode: true },
  engine: { type: 'builtin' },
};
