import path from 'node:path';
import { packageRoot } from '../../core/paths.js';
import type { StagedView } from '../../runtime/staged/staged-agent-service.js';
import type { ProtocolContext } from './context.js';
import type { ProtocolDraft } from './export/draft.js';
import { spiritCoverage, type SpiritCoverage } from './spirit/index.js';

/**
 * The Protocol Agent is a configuration of the staged-agent framework (src/runtime/staged) plus this small module:
 * its id and shipped YAML, its custom validators (validators.ts), and how a conversation reads as a protocol (the
 * context response with its SPIRIT coverage, the draft the exports are made from).
 */
export const PROTOCOL_AGENT_ID = 'protocol_agent';

/** The shipped configuration, seeded into the database at start-up (agent_configs). */
export function protocolAgentConfigFile(): string {
  return path.join(packageRoot(), 'agents', 'protocol_agent.v1.yaml');
}

export function protocolContextOf(view: Pick<StagedView, 'state'>): ProtocolContext {
  return view.state.context as ProtocolContext;
}

type Fields = Record<string, unknown>;

/** Seed ContextResponse, plus the stages, the current stage's cards and the SPIRIT 2025 coverage. */
export function protocolContextResponse(view: StagedView): {
  id: string; conversationId: string; title: string; projectId: string | null; currentStage: string; stageStatus: 'in_progress' | 'completed';
  overallProgress: number; completedStages: string[]; stages: Array<{ stageId: string; stageName: string; contextField: string }>;
  scientificQuestion: Fields; pico: Fields; studyDesign: Fields; sampleSize: Fields; endpoints: Fields;
  actionCards: StagedView['actionCards']; spirit: SpiritCoverage; updatedAt: string;
} {
  const { run, state, config } = view;
  const context = protocolContextOf(view);
  return {
    id: run.id,
    conversationId: run.conversationId!,
    title: state.title,
    projectId: run.projectId,
    currentStage: state.currentStage,
    stageStatus: state.finished ? 'completed' : 'in_progress',
    overallProgress: Math.round((state.completedStages.length / config.stages.length) * 100),
    completedStages: state.completedStages,
    stages: config.stages.map((s) => ({ stageId: s.stageId, stageName: s.stageName, contextField: s.contextField })),
    scientificQuestion: (context.scientificQuestion ?? {}) as Fields,
    pico: (context.pico ?? {}) as Fields,
    studyDesign: (context.studyDesign ?? {}) as Fields,
    sampleSize: (context.sampleSize ?? {}) as Fields,
    endpoints: (context.endpoints ?? {}) as Fields,
    actionCards: view.actionCards,
    spirit: spiritCoverage(context),
    updatedAt: state.updatedAt,
  };
}

/** What the Markdown and DOCX exports are made from. */
export function protocolDraftOf(view: StagedView): ProtocolDraft {
  return {
    title: view.state.title,
    context: protocolContextOf(view),
    stages: view.config.stages.map((s) => ({ stageId: s.stageId, stageName: s.stageName, contextField: s.contextField, completed: view.state.completedStages.includes(s.stageId) })),
    generatedAt: new Date(),
  };
}
