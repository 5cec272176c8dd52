import { z } from 'zod';

/**
 * GET /api/agents: every agent of the one registry, as the runtime runs it. Admins see all; anyone else sees the
 * agents their role may start (writer roles: scenarios, staged agents, the consult; everyone: the trial assistant).
 */
const AgentKind = z
  .enum(['scenario', 'staged', 'conversation', 'one_shot', 'internal'])
  .describe('scenario: a scenario file; staged: a staged agent (its stages listed); conversation: a chat a person holds (the consult, the trial assistant); one_shot: one model call with its answer schema; internal: run by a feature (the soft-rule judge, intent routing, pruning)');

const AgentLimits = z
  .object({
    maxRounds: z.int().optional().describe('model calls per turn'),
    maxToolRounds: z.int().optional().describe('tool rounds, after which the model has to answer'),
    tokenBudget: z.int().optional().describe('every token a turn sends and receives'),
    reasoningBudget: z.int().optional().describe('tokens a turn adds beyond its fixed context'),
    errorBreaker: z.int().optional().describe('failed tool calls in a row'),
    attempts: z.int().optional().describe('unusable answers plus failed tool rounds'),
    modelErrorsAreAttempts: z.boolean().optional(),
  })
  .describe('stop settings; an absent one is no limit');

export const AgentSummary = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  kind: AgentKind,
  engine: z.object({
    type: z.enum(['builtin', 'dify', 'openai-agents']),
    appMode: z.string().optional().describe("dify only: the app's mode"),
    host: z.string().optional().describe("dify only: the host of the app's API (never its key variable)"),
  }),
  tools: z.array(z.string()).describe('registry tools it may run, whatever the model asks for'),
  requestTools: z.array(z.string()).describe('tools bound to one request (a project, an upload), offered when a run has them'),
  answer: z
    .object({
      format: z.enum(['text', 'json', 'decision']).describe('what the schema applies to: the text, the JSON object in it, or the final JSON decision'),
      schema: z.record(z.string(), z.unknown()).describe('JSON Schema every final answer is checked against before it is used'),
    })
    .describe('what a valid answer is; an answer that fails it goes back to the model with the problems'),
  limits: AgentLimits,
  stages: z.array(z.object({ id: z.string(), name: z.string(), transition: z.string() })).optional().describe('staged agents only'),
});
export type AgentSummary = z.infer<typeof AgentSummary>;

export const AgentList = z.object({ agents: z.array(AgentSummary) });
export type AgentList = z.infer<typeof AgentList>;
