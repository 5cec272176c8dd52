import type { ChatMessage } from '../../core/llm/types.js';
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../../core/llm/untrusted-data.js';
import type { StagedAgentConfig, StageConfig } from './config.js';
import { isPresent } from './context-paths.js';
import type { ExecutionPlan, HistoryLine } from './types.js';

/**
 * The stage's system prompt (seed 001 section 3.3): role, tone, the stage's instruction, what has been collected
 * so far, and how to hand back what the user said in an <extracted_data> block. The collected context is the
 * user's own text, so it goes in as a declared data block, never as instructions.
 */
export function buildSystemPrompt(config: StagedAgentConfig, stage: StageConfig, context: Record<string, unknown>, plan: ExecutionPlan): string {
  const example = (stage.extractionSchema as { example?: unknown }).example ?? {};
  const collected = Object.fromEntries(Object.entries(context).filter(([, value]) => isPresent(value)));
  return [
    '# Role',
    config.baseSystemPrompt,
    config.toneOfVoice ? `\n# Tone\n${config.toneOfVoice}` : '',
    `\n# Current stage: ${stage.stageName}`,
    stage.instruction,
    stage.completionCriteria ? `\nThe stage is complete when: ${stage.completionCriteria}` : '',
    `\n# What this turn is for\n${plan.planReason}.`,
    '\n# Protocol information collected so far',
    dataBlock('protocol_context', collected),
    '\n# Recording what the user said',
    `At the very end of your reply, if the user gave new information for this stage, add the structured data in this XML block, with only the keys the user actually stated (JSON, the keys of the example):\n<extracted_data>\n${JSON.stringify(example, null, 2)}\n</extracted_data>`,
    '\n# Rules',
    '- Never invent or assume anything the user did not say: leave a key out rather than guess (no default alpha, no sample size the user or a tool did not give).',
    "- Record values in the user's own words and language (do not translate them): what is recorded is checked against what they wrote.",
    '- When information is incomplete, ask for what is missing, one or two questions at a time.',
    '- When something is ambiguous, confirm before recording it.',
    '- Be professional and friendly; answer in the language the user writes in.',
    `- ${DATA_NOT_INSTRUCTIONS}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * The history the model sees: `full` keeps every turn, `sliding_window` the last `maxHistoryTurns` exchanges. The
 * context block already carries what was collected, so a window loses no recorded fact.
 */
export function historyMessages(config: StagedAgentConfig, history: readonly HistoryLine[]): ChatMessage[] {
  const kept = config.memoryStrategy === 'full' ? history : history.slice(-config.maxHistoryTurns * 2);
  return kept.map((line) => ({ role: line.role, content: line.content }));
}
