import type { ChatMessage } from '../../core/llm/types.js';
import type { OutputType } from '../../core/structured/output-types.js';
import type { HistoryStrategy } from '../conversations/history-strategy.js';
import type { AnswerSchema } from './answer-schema.js';

/**
 * How the model acts in a round:
 * - `native`: OpenAI function calling; a reply without tool calls is the answer;
 * - `json`: one JSON decision per round (seed 003): `{"action": "use_tool", "tool": ..., "arguments": {...}}` runs a
 *   tool; any other action of `actions` ends the turn with that decision. An action named in `waitOn` ends it
 *   waiting for a person: `answer` (the run resumes with their reply) or `approval` (approve or reject).
 */
export type DecisionSpec =
  | { mode: 'native' }
  | { mode: 'json'; actions: readonly string[]; toolAction: string; waitOn?: Readonly<Record<string, 'answer' | 'approval'>> };

/** When a turn stops, besides a final answer; every field is optional and off when absent. */
export interface StopSettings {
  /** Model calls per turn. */
  maxRounds?: number;
  /** Successful tool rounds; after them tools are withheld and the model has to answer. */
  maxToolRounds?: number;
  /** Every token the turn sends and receives. */
  tokenBudget?: number;
  /** Tokens the turn adds beyond its fixed context (system prompt, memory, history). */
  reasoningBudget?: number;
  /** Failed tool calls in a row (seed 000's hallucination breaker). */
  errorBreaker?: number;
  /** Unusable answers plus rounds with a failed tool call (plus failed model calls with `modelErrorsAreAttempts`). */
  attempts?: number;
  /** A failed model call is one more failed attempt instead of ending the turn (upkeep jobs that fall back to a notice). */
  modelErrorsAreAttempts?: boolean;
}

/** How tool calls outside what the agent may do right now are answered. */
export interface ToolUse {
  /** A tool call in a round that offered none: `refuse` (the default) sends a refusal back, `finish` takes the text as the answer. */
  whenWithheld?: 'finish' | 'refuse';
  /** Where refusals say the tool is not allowed: "for this rule", "for trial questions (read-only)". */
  scope?: string;
  /** What `stop.maxToolRounds` counts: rounds whose calls all succeeded (the default), or every tool round (scenarios). */
  toolRoundsCounted?: 'successful' | 'all';
}

/** Who runs the definition: the one loop, an app on another platform (seed 004 section 11), or the OpenAI Agents SDK's run loop. */
export type EngineSpec = { type: 'builtin' } | DifyEngineSpec | { type: 'openai-agents' };

/** A value of a Dify app's start form: its text, number, select and checkbox variables. */
export type DifyInputValue = string | number | boolean;

/**
 * A Dify app: chat, agent and chatflow apps answer `query` (POST /chat-messages), completion apps read it from
 * `inputs.query` (or `inputVariable`), workflows read it from `inputVariable` and answer with output `outputKey`.
 * `inputs` are the start-form values every run sends; a run may add its own over them.
 */
export interface DifyEngineSpec {
  type: 'dify';
  baseUrl: string;
  apiKeyEnv: string;
  appMode: 'chat' | 'agent' | 'completion' | 'workflow';
  inputs?: Readonly<Record<string, DifyInputValue>>;
  /** Workflow and completion apps: the start-form variable the run's text goes into. */
  inputVariable?: string;
  /** Workflow apps: the output whose value is the answer. */
  outputKey?: string;
}

/** One stage of a staged agent (seed 001): its own instructions and what it must collect before it completes. */
export interface StageDefinition {
  id: string;
  name: string;
  instructions: string;
  /** JSON Schema of what the stage extracts, when it extracts anything. */
  extraction?: Record<string, unknown>;
  /** How the run moves on: after the user confirms (the run waits), at once, or when a condition holds. */
  transition: 'user_confirm' | 'auto' | 'condition';
}

/**
 * What kind of agent it is, as GET /api/agents lists it: a scenario file, a staged agent (seed 001), a conversation
 * a person holds (the consult, the trial assistant), a one-round call (a summary, a verdict), or an agent the
 * system runs inside another feature (the soft-rule judge, intent routing, pruning).
 */
export type AgentKind = 'scenario' | 'staged' | 'conversation' | 'one_shot' | 'internal';

/** Builds the messages of a turn from the agent's own input (a record, a question with its context). */
export type PromptBuilder<I> = (input: I) => ChatMessage[];

/**
 * An agent, declared: everything the one runtime needs to run it. YAML scenarios compile to definitions through
 * the definitions loader; agents written in code (investigate, intent routing, the soft-rule judge, hot-memory
 * pruning) declare theirs next to their prompt. The registry (registry.ts) holds them all by id.
 */
export interface AgentDefinition<I = string, O = string> {
  id: string;
  name: string;
  description: string;
  /** The file it came from, or `builtin:<module>` for one declared in code; named in every error about it. */
  sourceFile: string;
  /** Set when its source does not say it (agent-kind.ts): a builtin agent people converse with. */
  kind?: AgentKind;
  /** A system prompt, or a builder of the whole message list from the agent's input. */
  instructions: string | PromptBuilder<I>;
  /** The only registry tools the agent may run, whatever the model asks for. */
  tools: readonly string[];
  /**
   * Tools bound to one request (a project's records, the acting user), added to the registry per run
   * (ToolRegistry.extend): the start-up registry does not know them, and a run offers those its registry has.
   */
  requestTools?: readonly string[];
  toolUse?: ToolUse;
  decision: DecisionSpec;
  output: OutputType;
  /**
   * What a valid answer is (zod for agents in code, refinements included). The loop reads every final answer
   * through it and sends the correction round itself. Without it, a valid answer is one of the output type (its
   * JSON Schema when declared) that a person can be shown (answer-schema.ts outputAnswer), as for YAML scenarios.
   */
  answer?: AnswerSchema<O, I>;
  /** The JSON shape a correction asks for after an unusable answer, e.g. `{"intents": [...]}`. */
  answerShape?: string;
  /**
   * The message that carries an unusable answer's problems back, when the agent words it itself (in the asker's
   * language); by default the one correction message of its answer's format (correction.ts).
   */
  correction?: (problems: readonly string[], input: I | undefined) => ChatMessage;
  stop: StopSettings;
  history: HistoryStrategy;
  model: { name?: string; temperature?: number; maxTokens?: number; jsonMode?: boolean };
  engine: EngineSpec;
  /** Staged agents only (seed 001). */
  stages?: readonly StageDefinition[];
}
