import { StageConfig } from '../runtime/staged/config.js';

/** A Protocol-Agent-like PICO stage, for tests of what runs inside a stage (reflexion checks, their model faults). */
export const PICO_STAGE = StageConfig.parse({
  stageId: 'pico',
  stageName: 'PICO',
  contextField: 'pico',
  instruction: 'Collect population, intervention, comparison and outcome.',
  extractionSchema: { type: 'object', properties: { population: { type: 'string' } } },
  completionCriteria: 'All four PICO elements are specific.',
  nextStageId: 'study_design',
  transitionMode: 'user_confirm',
});
