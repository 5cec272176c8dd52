import type { FaultTarget } from '../target.js';
import { consultStreamTarget, consultTarget } from './consult.js';
import { durableRunTarget } from './durable-run.js';
import { distillTarget, pruneTarget } from './memory-writers.js';
import { conversationSummaryTarget, reflexionTarget, yearlySummaryTarget } from './one-round.js';
import { protocolAgentStreamTarget, protocolAgentTarget } from './protocol-agent.js';
import { agentsSdkScenarios, scenarioTarget, shippedScenarios } from './scenario.js';
import { softRuleTarget } from './soft-rule.js';
import { trialAssistantStreamTarget, trialAssistantTarget } from './trial-assistant.js';
import { weeklyReportTarget } from './weekly-report.js';

export { FAULT_SKILLS } from './trial-project.js';

/**
 * Every agent under the fault suite. A new agent joins by a target here; the completeness test fails while an agent
 * of the registry or a shipped scenario has none. Each shipped scenario is a target of its own, made from its file.
 */
export function faultTargets(): FaultTarget[] {
  return [
    consultTarget,
    consultStreamTarget,
    protocolAgentTarget,
    protocolAgentStreamTarget,
    trialAssistantTarget,
    trialAssistantStreamTarget,
    weeklyReportTarget,
    distillTarget,
    pruneTarget,
    yearlySummaryTarget,
    reflexionTarget,
    conversationSummaryTarget,
    ...[...shippedScenarios(), ...agentsSdkScenarios()].flatMap((scenario) => [scenarioTarget(scenario), scenarioTarget(scenario, { streamed: true })]),
    // Last: runs advanced by job workers may go on retrying a fault after their cell gave up on them.
    softRuleTarget,
    durableRunTarget,
  ];
}
