import type { ProtocolContextResponse } from '../../api';

export type StageState = 'completed' | 'current' | 'upcoming';

export interface StageStep {
  stageId: string;
  stageName: string;
  contextField: string;
  state: StageState;
  /** 1-based, as the progress reads ("Stage 2 of 5"). */
  position: number;
}

/**
 * The stages in the agent's order, each marked done, current or still to come. A completed stage stays
 * ticked even when it is current again (a researcher may go back); the last stage completed is both.
 */
export function stageSteps(context: Pick<ProtocolContextResponse, 'stages' | 'completedStages' | 'currentStage'>): StageStep[] {
  const completed = new Set(context.completedStages);
  return context.stages.map((stage, index) => ({
    ...stage,
    position: index + 1,
    state: completed.has(stage.stageId) ? 'completed' : stage.stageId === context.currentStage ? 'current' : 'upcoming',
  }));
}

/** True once every stage is completed: the protocol is ready to export and there is nothing left to complete. */
export function isProtocolComplete(context: Pick<ProtocolContextResponse, 'stages' | 'completedStages'>): boolean {
  const completed = new Set(context.completedStages);
  return context.stages.length > 0 && context.stages.every((stage) => completed.has(stage.stageId));
}
