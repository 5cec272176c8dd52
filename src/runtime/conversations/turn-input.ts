import { z } from 'zod';
import { ClinAgentError, formatIssues } from '../../core/errors.js';
import { UUID_PATTERN } from '../../core/ids.js';
import { countTokens } from '../../core/tokenizer.js';
import type { TurnInput } from './types.js';

const traceId = z.string().regex(new RegExp(UUID_PATTERN), 'must be a UUID (the traceId of the run)').optional();
const toolCall = z.object({ id: z.string().min(1), name: z.string().min(1), arguments: z.string() }).strict();

const turnSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.string(), traceId }).strict(),
  z
    .object({ role: z.literal('assistant'), content: z.string().optional(), toolCalls: z.array(toolCall).optional(), traceId })
    .strict()
    .refine((turn) => Boolean(turn.content) || Boolean(turn.toolCalls?.length), { message: 'an assistant turn needs content or toolCalls' }),
  z.object({ role: z.literal('tool'), content: z.string(), toolCallId: z.string().min(1), toolName: z.string().min(1).optional(), traceId }).strict(),
]);

/**
 * One append is one step of a run (a user message, a model answer with its tool results); more than this in
 * one call is a caller bug, not a conversation.
 */
const MAX_TURNS_PER_APPEND = 200;

const turnsSchema = z.array(turnSchema).min(1, 'append at least one turn').max(MAX_TURNS_PER_APPEND);

/** A validated turn with what the row stores besides it. */
export interface TurnRow {
  role: TurnInput['role'];
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }> | null;
  toolCallId: string | null;
  toolName: string | null;
  tokens: number;
  traceId: string | null;
}

/** Validates turns to append, reporting every bad field at once (`turns.2.toolCallId: ...`). */
export function toTurnRows(turns: unknown): TurnRow[] {
  const parsed = turnsSchema.safeParse(turns);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues.map((issue) => ({ ...issue, path: ['turns', ...issue.path] })));
    throw new ClinAgentError('VALIDATION_FAILED', `The turns cannot be appended:\n- ${problems.join('\n- ')}`, { field: 'turns', problems });
  }
  return parsed.data.map((turn) => {
    const content = turn.content ?? '';
    const toolCalls = turn.role === 'assistant' && turn.toolCalls?.length ? turn.toolCalls : null;
    return {
      role: turn.role,
      content,
      toolCalls,
      toolCallId: turn.role === 'tool' ? turn.toolCallId : null,
      toolName: turn.role === 'tool' ? (turn.toolName ?? null) : null,
      tokens: turnTokens(content, toolCalls),
      traceId: turn.traceId ?? null,
    };
  });
}

/**
 * What the turn costs when it goes back to the model: its text, plus the tool calls' names and arguments,
 * which are sent too and can be long (a list of record ids). Windows are cut by this number.
 */
function turnTokens(content: string, toolCalls: TurnRow['toolCalls']): number {
  let tokens = content ? countTokens(content) : 0;
  for (const call of toolCalls ?? []) tokens += countTokens(call.name) + countTokens(call.arguments);
  return tokens;
}
