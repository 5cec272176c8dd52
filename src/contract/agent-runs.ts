import { z } from 'zod';
import { IdText, Uuid } from './common.js';

/** PENDING: queued. SUSPENDED: waiting for you (an answer or an approval). CANCELLED: stopped by its user. */
const AgentRunStatus = z.enum(['PENDING', 'RUNNING', 'SUSPENDED', 'COMPLETED', 'FAILED', 'CANCELLED']);
type AgentRunStatus = z.infer<typeof AgentRunStatus>;

/** POST /api/agent/runs: a durable run of a scenario, advanced by job workers; answered 202 at once. */
export const StartAgentRunRequest = z.strictObject({
  scenarioId: IdText,
  input: z.string().min(1).max(20_000),
  conversationId: Uuid.optional().describe('the conversation the run answers in, when it has one'),
});
export type StartAgentRunRequest = z.infer<typeof StartAgentRunRequest>;

/** What a run waiting for a person asks: an answer (text) or an approval (approve or reject). */
const AgentRunWaiting = z.object({
  awaiting: z.enum(['answer', 'decision']),
  prompt: z.string().describe('the question, or what is to be approved'),
  action: z.string().optional().describe("the agent's decision that waits"),
  dataHash: z.string().optional().describe('send it back with the answer or decision: a reply to a run that has since moved on is refused (409)'),
});

export const AgentRun = z.object({
  id: z.string(),
  agent: z.string().describe('the scenario (agent definition) it runs'),
  userId: z.string().nullable(),
  projectId: z.string().nullable(),
  conversationId: z.string().nullable(),
  status: AgentRunStatus,
  waiting: AgentRunWaiting.nullable().describe('set while the run is SUSPENDED'),
  answer: z.string().nullable().describe('the final answer, once COMPLETED'),
  error: z.string().nullable(),
  recovering: z.boolean().describe('its worker stopped; another one is picking it up'),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
});
export type AgentRun = z.infer<typeof AgentRun>;

/** GET /api/agent/runs: newest first; `before` is the `nextBefore` of the previous page. */
export const AgentRunListQuery = z.strictObject({
  agent: IdText.optional(),
  user: Uuid.optional().describe('admins only: the runs of this user'),
  limit: z.int().min(1).max(200).default(50),
  before: z.string().max(200).optional(),
});
export type AgentRunListQuery = z.input<typeof AgentRunListQuery>;
export const AgentRunList = z.object({ runs: z.array(AgentRun), nextBefore: z.string().nullable() });
export type AgentRunList = z.infer<typeof AgentRunList>;

/** POST /api/agent/runs/:id/answer */
export const AgentRunAnswerRequest = z.strictObject({ answer: z.string().min(1).max(20_000), dataHash: z.string().max(128).optional() });
/** POST /api/agent/runs/:id/decision */
export const AgentRunDecisionRequest = z.strictObject({ decision: z.enum(['approve', 'reject']), comment: z.string().max(2000).optional(), dataHash: z.string().max(128).optional() });
