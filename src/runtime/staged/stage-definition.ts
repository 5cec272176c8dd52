import type { ChatMessage } from '../../core/llm/types.js';
import { z } from 'zod';
import type { AgentDefinition, StageDefinition } from '../definitions/agent-definition.js';
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
 * A stage's turn as a definition of the one runtime: the stage's tools, native tool calling, the config's model
 * settings. A staged agent is a configuration; this is how each of its stages runs on the one loop.
 */
export function stageTurnDefinition(config: StagedAgentConfig, stage: StageConfig, configVersion: number): AgentDefinition<StageTurnInput> {
  return {
    id: `${config.agentId}.${stage.stageId}`,
    name: `${config.agentName}: ${stage.stageName}`,
    description: stage.instruction.slice(0, 200),
    sourceFile: `config:${config.agentId}@${configVersion}`,
    instructions: (input) => [{ role: 'system', content: input.system }, ...input.history, { role: 'user', content: input.message }],
    tools: stage.availableToolIds,
    toolUse: { whenWithheld: 'finish' },
    decision: { mode: 'native' },
    output: { name: 'text' },
    answer: STAGE_ANSWER,
    stop: STAGE_TURN_STOP,
    history: config.memoryStrategy === 'full' ? { strategy: 'full' } : { strategy: 'sliding_window', maxTurns: config.maxHistoryTurns * 2 },
    model: { name: config.defaultModel, temperature: config.temperature, maxTokens: config.maxTokens },
    engine: { type: 'builtin' },
  };
}

/**
 * The staged agent in the one registry of agent definitions (listed with the others, validated at start-up: its
 * stage tools must exist). Its stages run through stageTurnDefinition with the configuration in use.
 */
export function stagedAgentDefinition(config: StagedAgentConfig, sourceFile: string): AgentDefinition<StageTurnInput> {
  const stages: StageDefinition[] = config.stages.map((stage) => ({ id: stage.stageId, name: stage.stageName, instructions: stage.instruction, extraction: stage.extractionSchema, transition: stage.transitionMode }));
  const tools = [...new Set(config.stages.flatMap((stage) => stage.availableToolIds))];
  return { ...stageTurnDefinition(config, config.stages[0]!, config.version), id: config.agentId, name: config.agentName, description: config.baseSystemPrompt.slice(0, 200), sourceFile, tools, stages };
}
