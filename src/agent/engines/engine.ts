import type { AgentResult } from '../result.js';
import type { RunAgentOptions } from '../run-agent.js';
import type { Scenario } from '../scenarios/load.js';

/**
 * Seed 004 section 11: what runs a definition. The built-in engine is the one loop (runAgent); another engine
 * (a Dify app) runs the same scenario elsewhere and answers with the same AgentResult, the same events and the
 * same trace, and fails the same way: never a throw for a run-level problem, a failed result naming the cause.
 */
export interface AgentEngine {
  readonly type: string;
  run(scenario: Scenario, input: string, options: RunAgentOptions): Promise<AgentResult>;
}
