import type { ConversationStore } from '../conversations/index.js';
import type { DifyInputValue } from '../definitions/agent-definition.js';
import type { AgentResult } from '../result.js';
import type { RunAgentOptions } from '../run-agent.js';
import type { Scenario } from '../scenarios/load.js';

/** runAgent's options; another engine also keeps its own conversation id with ours (conversations.engine_ref). */
export interface EngineRunOptions extends RunAgentOptions, EngineRunRequest {
  conversation?: NonNullable<RunAgentOptions['conversation']> & { store: Pick<ConversationStore, 'start' | 'append' | 'history' | 'engineRef' | 'setEngineRef'> };
}

/** What a run asks of an engine besides its text: checked by `assertReady` before the run starts. */
export interface EngineRunRequest {
  /** A Dify app's start-form values for this run, merged over the scenario's `engine.inputs`. */
  inputs?: Readonly<Record<string, DifyInputValue>>;
}

/**
 * Seed 004 section 11: what runs a definition. The built-in engine is the one loop (runAgent); another engine
 * (a Dify app) runs the same scenario elsewhere and answers with the same AgentResult, the same events and the
 * same trace, and fails the same way: never a throw for a run-level problem, a failed result naming the cause.
 */
export interface AgentEngine {
  readonly type: string;
  /** The engine reads a run's `inputs` (start-form values); a run of any other engine that sends them is refused. */
  readonly takesInputs?: boolean;
  /**
   * Throws what the caller must fix before a run can start (a Dify key variable that is not set, an input that
   * would overwrite the run's text), so routes answer 4xx before any call and before a stream opens. Absent:
   * nothing to check.
   */
  assertReady?(scenario: Scenario, request?: EngineRunRequest): void;
  run(scenario: Scenario, input: string, options: EngineRunOptions): Promise<AgentResult>;
}
