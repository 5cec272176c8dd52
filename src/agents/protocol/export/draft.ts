import type { ProtocolContext } from '../context.js';

/** One stage as the agent's configuration names it; `contextField` is where its data lives in the context. */
export interface ProtocolDraftStage {
  stageId: string;
  stageName: string;
  contextField: string;
  completed: boolean;
}

/** What a protocol export is made from: the context, the stages in order, and when it was generated. */
export interface ProtocolDraft {
  title: string;
  context: ProtocolContext;
  stages: ProtocolDraftStage[];
  generatedAt: Date;
}
