import type { ChatMessage } from '../../core/llm/types.js';
import { z } from 'zod';
import type { AgentDefinition, StageDefinition } from '../definitions/agent-definition.js';
import { agentId, type AgentRegistry } from '../definitions/registry.js';
import { ClinAgentError } from '../../core/errors.js';
import { textAnswer } from '../definitions/answer-schema.js';
import type { StagedAgentConfig, StageConfig } from './config.js';

/** What one stage turn is built from: the system prompt already made, the history the window keeps, the message. */
interface StageTurnInput {
  system: string;
  history: ChatMessage[];
  message: string;
}

/**
 * A stage turn's answer is whatever the model wrote: the turn records it (turn-record.ts), cut at MAX_REPLY_CHARS
 * and with its <extracted_data> block taken out, so a run-on reply is shortened, not asked for again, and a reply
 * that only extracts (no text for the reader) still records what it extracted.
 */
const STAGE_ANSWER = textAnswer(z.string());

/** How many model calls a stage turn may take: a tool call or two (the calculator) and the answer. */
const STAGE_TURN_STOP = { maxRounds: 4, maxToolRounds: 2, errorBreaker: 2 } as const;

/**
 * The staged agent a configuration belongs to, as the registry holds it: every stage turn runs from it. A stored
 * configuration whose agent is no longer registered (its file was removed from the deployment) cannot run.
 */
export function registeredStagedAgent(agents: Pick<AgentRegistry, 'get' | 'has'>, id: string): AgentDefinition<StageTurnInput, string> {
  if (!agents.has(id)) {
    throw new ClinAgentError('NOT_FOUND', `Staged agent "${id}" is not registered on this server, so its conversations cannot run. Its configuration file is registered at start-up: restore the file (or the deployment that shipped it) and restart.`, { agentId: id });
  }
  const registered = agents.get(agentId<StageTurnInput, string>(id));
  if (!registered.stages?.length) {
    throw new ClinAgentError('NOT_FOUND', `Agent "${id}" is not a staged agent (it has no stages); staged conversations run only agents registered from a staged configuration file.`, { agentId: id });
  }
  return registered;
}

/**
 * The staged agent in the one registry of agent definitions (listed with the others, validated at start-up: its
 * stage tools must exist). What does not change with a configuration version lives here: how a turn's prompt is laid
 * out, native tool calling, the answer and the stop limits. Each stage runs as stageTurnDefinition of it.
 */
export function stagedAgentDefinition(config: StagedAgentConfig, sourceFile: string): AgentDefinition<StageTurnInput, string> {
  const stages: StageDefinition[] = config.stages.map((stage) => ({ id: stage.stageId, name: stage.stageName, instructions: stage.instruction, extraction: stage.extractionSchema, transition: stage.transitionMode }));
  return {
    ...versioned(config),
    id: config.agentId,
    name: config.agentName,
    description: config.baseSystemPrompt.slice(0, 200),
    sourceFile,
    instructions: (input) => [{ role: 'system', content: input.system }, ...input.history, { role: 'user', content: input.message }],
    tools: [...new Set(config.stages.flatMap((stage) => stage.availableToolIds))],
    stages,
    toolUse: { whenWithheld: 'finish' },
    decision: { mode: 'native' },
    output: { name: 'text' },
    answer: STAGE_ANSWER,
    stop: STAGE_TURN_STOP,
    engine: { type: 'builtin' },
  };
}

/**
 * One stage's turn: the registered staged agent with the configuration version its conversation runs on laid over
 * it. An admin's new version changes the stages, their tools, the model settings and the history window without a
 * restart, so those come from the version; everything else is the registered definition's.
 */
export function stageTurnDefinition(registered: AgentDefinition<StageTurnInput, string>, config: StagedAgentConfig, stage: StageConfig, configVersion: number): AgentDefinition<StageTurnInput, string> {
  const { stages: _stages, ...turn } = registered;
  return {
    ...turn,
    ...versioned(config),
    id: `${registered.id}.${stage.stageId}`,
    name: `${config.agentName}: ${stage.stageName}`,
    description: stage.instruction.slice(0, 200),
    sourceFile: `${registered.sourceFile} (configuration version ${configVersion})`,
    tools: stage.availableToolIds,
  };
}

/** What an admin's configuration version sets for every stage turn. */
function versioned(config: StagedAgentConfig): Pick<AgentDefinition<StageTurnInput, string>, 'history' | 'model'> {
  return {
    history: config.memoryStrategy === 'full' ? { strategy: 'full' } : { strategy: 'sliding_window', maxTurns: config.maxHistoryTurns * 2 },
    model: { name: config.defaultModel, temperature: config.temperature, maxTokens: config.maxTokens },
  };
}
