import { z } from 'zod';

/** A conversation as lists show it (GET /api/conversations). */
export const ConversationSummary = z.object({
  id: z.string(),
  userId: z.string().describe('the owner: only they continue it; admins may read it'),
  projectId: z.string().nullable().describe('the project the conversation is about, if any'),
  scenarioId: z.string().nullable(),
  title: z.string(),
  turnCount: z.int(),
  createdAt: z.string(),
  updatedAt: z.string().describe('when the last turn was added'),
});
export type ConversationSummary = z.infer<typeof ConversationSummary>;
export const ConversationList = z.object({ conversations: z.array(ConversationSummary) });

/** One persisted turn: a user, assistant or tool message, numbered from 1 within its conversation. */
export const ConversationTurn = z.object({
  seq: z.int(),
  role: z.enum(['user', 'assistant', 'tool']),
  content: z.string(),
  toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).nullable().describe("an assistant turn's tool calls as the model sent them"),
  toolCallId: z.string().nullable().describe('a tool turn: the call it answers'),
  toolName: z.string().nullable(),
  tokens: z.int().describe('what the turn costs when sent back to the model'),
  traceId: z.string().nullable().describe('the run that wrote it (GET /api/traces/:id)'),
  createdAt: z.string(),
});
export type ConversationTurn = z.infer<typeof ConversationTurn>;

/** GET /api/conversations/:id */
export const ConversationDetail = ConversationSummary.extend({
  summary: z.string().nullable().describe('the summary history strategy: what the model reads instead of turns 1..summarizedThroughSeq'),
  summarizedThroughSeq: z.int(),
  turns: z.array(ConversationTurn),
});
export type ConversationDetail = z.infer<typeof ConversationDetail>;

/** GET /api/conversations: unknown filters are refused rather than silently ignored. */
export const ConversationListQuery = z.strictObject({
  projectId: z.string().min(1).max(200).optional(),
  scenarioId: z.string().min(1).max(64).optional(),
  limit: z.int().min(1).max(200).default(50),
});
export type ConversationListQuery = z.input<typeof ConversationListQuery>;
