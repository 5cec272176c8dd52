import { agentId, type AgentDefinition } from '../../runtime/definitions/index.js';
import { buildSoftRuleMessages } from './prompt.js';
import { SOFT_RULE_ANSWER, SOFT_RULE_VERDICT, type SoftRuleVerdict } from './verdict.js';

/** One record judged against one instruction, with the tools that rule may call. */
export interface SoftRuleInput {
  instruction: string;
  context: unknown;
  tools: readonly string[];
}

/**
 * The soft-rule judge (seed 000 section 3.2). Each rule names its own tools, retries and tool rounds, so
 * runWithRetry runs this definition with those in `tools` and `stop`; here they are the defaults of a rule that
 * names none.
 */
/** Its id in the registry, typed: `agents.get(SOFT_RULE_AGENT)`. */
export const SOFT_RULE_AGENT = agentId<SoftRuleInput, SoftRuleVerdict>('soft_rule');

export const SOFT_RULE_DEFINITION: AgentDefinition<SoftRuleInput, SoftRuleVerdict> = {
  id: SOFT_RULE_AGENT,
  name: 'Soft-rule judge',
  description: 'Judges one record of a trial against a quality-control instruction, with a JSON verdict.',
  sourceFile: 'builtin:src/trial/soft/definition.ts',
  instructions: (input) => buildSoftRuleMessages(input.instruction, input.context, input.tools),
  tools: [],
  toolUse: { whenWithheld: 'refuse', scope: 'for this rule' },
  decision: { mode: 'native' },
  output: SOFT_RULE_VERDICT,
  answer: SOFT_RULE_ANSWER,
  answerShape: '{"passed": boolean, "reason": string, "confidence": number from 0 to 1, "evidence": string}',
  // Failed tool rounds are attempts (seed 000: 3 retries); successful ones are bounded by maxToolRounds, after
  // which tools are withheld and a call is refused, so a model that keeps calling cannot loop forever.
  stop: { attempts: 3, maxToolRounds: 4 },
  history: { strategy: 'none' },
  // temperature 0: the same record and rule should get the same verdict when the check is re-run.
  model: { temperature: 0 },
  engine: { type: 'builtin' },
};
