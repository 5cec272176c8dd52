import type { ConversationStore } from '../conversations/index.js';
import type { AgentResult } from '../result.js';
import type { RunAgentOptions } from '../run-agent.js';
import type { Scenario } from '../scenarios/load.js';

/** runAgent's options; another engine also keeps its own conversation id with ours (conversations.engine_ref). */
export interface EngineRunOptions extends RunAgentOptions {
  conversation?: NonNullable<RunAgentOptions['conversation']> & { store: Pick<ConversationStore, 'start' | 'append' | 'history' | 'engineRef' | 'setEngineRef'> };
}

/**
 * Seed 004 section 11: what runs a definition. The built-in engine is the one loop (runAgent); another engine
 * (a Dify app) runs the same scenario elsewhere and answers with the same AgentResult, the same events and the
 * same trace, and fails the same way: never a throw for a run-level problem, a failed result naming the cause.
 */
export interface AgentEngine {
  readonly type: string;
  /**
   * Throws what the caller must fix before a run can start (a Dify key variable that is not set), so routes answer
   * 4xx before any call and before a stream opens. Absent: nothing to check.
   */
  assertReady?(scenario: Scenario): void;
  run(scenario: Scenario, input: string, options: EngineRunOptions): Promise<AgentResult>;
}
