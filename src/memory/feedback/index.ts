import { ClinAgentError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { FeedbackService, MemoryDeps } from '../types.js';
import { assertMemoryReader } from '../hot/access.js';
import { selectFeedback, selectLastSeq, selectProjectConversation, selectTurnRole, toFeedbackView, upsertFeedback } from './feedback-queries.js';

/** Enough for "too long, I only want the conclusion, and the visit window is wrong"; a comment is not a report. */
const MAX_COMMENT_CHARS = 2000;
/** The newest ratings; the distillation reads the unread ones itself, whatever their age. */
const LIST_LIMIT = 500;

/**
 * Thumbs up or down on the trial assistant's answers (seed 000 V2.9 feedback loop). Any member of the project
 * rates any assistant answer of a conversation about it; the daily distillation reads unread feedback into
 * hot memory.
 */
export function createFeedback(deps: MemoryDeps): FeedbackService {
  return {
    async record(actor, projectId, input) {
      await assertMemoryReader(deps, actor, projectId);
      const { conversationId, turnSeq, rating, comment } = input ?? ({} as typeof input);
      const problems: string[] = [];
      if (typeof conversationId !== 'string' || !conversationId) problems.push('conversationId: must be the id of a conversation about this project');
      if (!Number.isInteger(turnSeq) || turnSeq < 1) problems.push('turnSeq: must be the seq (1, 2, 3...) of the assistant answer rated');
      if (rating !== 'up' && rating !== 'down') problems.push('rating: must be "up" or "down"');
      if (comment !== undefined && typeof comment !== 'string') problems.push('comment: must be text');
      else if (comment !== undefined && [...comment].length > MAX_COMMENT_CHARS) problems.push(`comment: ${[...comment].length} characters; keep it under ${MAX_COMMENT_CHARS}`);
      if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `The feedback cannot be recorded:\n- ${problems.join('\n- ')}`, { problems });

      // A conversation of another project answers as one that does not exist: ids reveal nothing across projects.
      if (!isUuid(conversationId) || !(await selectProjectConversation(deps.db, projectId, conversationId))) {
        throw new ClinAgentError('NOT_FOUND', `Conversation "${conversationId}" does not exist in project "${projectId}". Rate an answer from one of this project's conversations.`, { conversationId, projectId });
      }
      const role = await selectTurnRole(deps.db, conversationId, turnSeq);
      if (role !== 'assistant') {
        const last = await selectLastSeq(deps.db, conversationId);
        const why = role === undefined ? `the conversation has no turn ${turnSeq} (it has turns 1 to ${last})` : `turn ${turnSeq} is a ${role} turn`;
        throw new ClinAgentError('VALIDATION_FAILED', `turnSeq: ${why}; only the assistant's answers can be rated. Pass the seq of an assistant turn.`, { field: 'turnSeq', turnSeq, role: role ?? null });
      }
      const row = await upsertFeedback(deps.db, { projectId, conversationId, turnSeq, userId: actor.id, rating, comment: comment?.trim() }, deps.now?.() ?? new Date());
      return toFeedbackView(row);
    },

    async list(actor, projectId) {
      await assertMemoryReader(deps, actor, projectId);
      return selectFeedback(deps.db, projectId, LIST_LIMIT);
    },
  };
}
