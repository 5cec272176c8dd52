import type { StageConfig } from './config.js';
import type { ExecutionPlan, QueryAnalysisResult } from './types.js';

/**
 * Planning (seed 001 section 2.3): what this message calls for at this stage. Every message may carry data
 * (people answer a question and add a fact in one sentence), so extraction runs on every strategy that talks
 * about the protocol; only small talk and an unclear message skip it.
 */
export function createPlan(query: QueryAnalysisResult, stage: StageConfig): ExecutionPlan {
  const intent = query.intent.primary;
  const base = { toolsNeeded: [] as string[], shouldExtract: true, shouldReflect: true, tryTransition: stage.transitionMode !== 'user_confirm' };
  switch (intent) {
    case 'confirm_complete':
      return { ...base, strategy: 'transition_stage', tryTransition: true, planReason: 'the user asks to move on: the stage is checked for completion after the reply' };
    case 'request_tool':
      return { ...base, strategy: 'trigger_tool', toolsNeeded: [...stage.availableToolIds], planReason: `the user asks for a tool: ${stage.availableToolIds.join(', ') || 'the stage cards'} offered` };
    case 'request_change':
      return { ...base, strategy: 'update_context', planReason: 'the user corrects what was recorded: the new values replace the old' };
    case 'ask_question':
      return { ...base, strategy: 'answer_question', planReason: 'the user asks a question: answer it, and record any fact it states' };
    case 'chitchat':
      return { ...base, strategy: 'handle_chitchat', shouldExtract: false, shouldReflect: false, tryTransition: false, planReason: 'small talk: reply and guide back to the stage' };
    case 'unclear':
      return { ...base, strategy: 'request_clarification', shouldExtract: false, shouldReflect: false, tryTransition: false, planReason: 'the message is too short to act on: ask what the user means' };
    default:
      return { ...base, strategy: 'guide_and_extract', planReason: 'the user gives information: record it and ask for what the stage still needs' };
  }
}
