import type { MembershipCheck } from '../../core/auth/membership.js';
import { WRITER_ROLES, type User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { AgentRegistry } from '../definitions/registry.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import { buildHistory } from './build-history.js';
import {
  insertConversation,
  insertTurns,
  projectExists,
  selectConversation,
  selectConversations,
  selectLastSeq,
  selectTurns,
  toSummary,
  updateEngineRef,
  updateSummary,
  type ConversationRow,
} from './conversation-queries.js';
import { assertHistoryStrategy } from './history-strategy.js';
import { summarizeTurns } from './summarize-turns.js';
import { toTurnRows } from './turn-input.js';
import type { ConversationStore, ListConversationsOptions } from './types.js';
import { withTransaction } from '../../core/db/transaction.js';

export interface ConversationStoreDeps {
  db: Db;
  users: MembershipCheck;
  /** The one gateway; the summary history strategy condenses old turns through it. */
  llm?: LlmGateway;
  /** The registry the summary's definition is resolved from (the server's). */
  agents: Pick<AgentRegistry, 'get'>;
  /** The clock for when a conversation starts and was last active; tests pass one that moves on each call. */
  now?: () => Date;
}

/** Titles are for lists; a first question used as a title is shortened to this many characters. */
const MAX_TITLE_CHARS = 120;
const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 200;
const SCENARIO_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The same answer for a missing conversation and one the actor may not see, so ids reveal nothing. */
const notFound = (id: string) =>
  new ClinAgentError('NOT_FOUND', `Conversation "${id}" does not exist or is not yours. Your conversations are listed by GET /api/conversations.`, { conversationId: id });

export function createConversationStore(deps: ConversationStoreDeps): ConversationStore {
  const { db, users } = deps;
  const now = deps.now ?? (() => new Date());

  /** The conversation if the actor may read it: its owner, or an admin. */
  async function readable(id: string, actor: User): Promise<ConversationRow> {
    const row = isUuid(id) ? await selectConversation(db, id) : undefined;
    if (!row || (row.userId !== actor.id && actor.role !== 'admin')) throw notFound(id);
    return row;
  }

  /**
   * Continuing a conversation (append, history) is for its owner only, while they may still run agents (about no
   * project) or still belong to its project: a member removed from a trial cannot keep feeding its data to the model.
   */
  async function assertMayContinue(row: ConversationRow, actor: User, scenarioId?: string): Promise<void> {
    if (scenarioId !== undefined && row.scenarioId !== scenarioId) {
      // A conversation belongs to one agent: another one's turns would reach this scenario's model as its own history.
      const belongs = row.scenarioId ? `scenario "${row.scenarioId}"` : row.projectId ? `the assistant of project "${row.projectId}"` : 'another agent';
      throw new ClinAgentError('CONFLICT_STATE', `Conversation "${row.id}" belongs to ${belongs}, not to scenario "${scenarioId}". Continue it there, or leave conversationId out to start a new conversation.`, { conversationId: row.id, scenarioId: row.scenarioId });
    }
    if (row.userId !== actor.id) {
      // Only an admin gets this far (anyone else got NOT_FOUND): they may read it, not write in someone's name.
      throw new ClinAgentError('FORBIDDEN', `Conversation "${row.id}" belongs to another user; only its owner can continue it. Start a new conversation instead.`, { conversationId: row.id });
    }
    if (!row.projectId) assertWriter(actor);
    if (row.projectId && !(await users.isMember(row.projectId, actor))) {
      throw new ClinAgentError('FORBIDDEN', `You are no longer a member of project "${row.projectId}", so this conversation about it cannot be continued. Ask a project admin to add you again.`, { conversationId: row.id, projectId: row.projectId });
    }
  }

  return {
    async start({ id, actor, projectId, scenarioId, title, firstTurns }) {
      // Asking about a project's data is reading it: any member may (the trial assistant answers viewers too).
      // A conversation about no project drives scenario agents, which only writer roles may run.
      if (projectId === undefined) assertWriter(actor);
      const problems: string[] = [];
      if (typeof title !== 'string') problems.push('title: must be a string');
      if (id !== undefined && !isUuid(id)) problems.push('id: must be a UUID');
      if (scenarioId !== undefined && !SCENARIO_ID.test(scenarioId)) problems.push(`scenarioId: "${scenarioId}" is not a scenario id (GET /api/scenarios lists them)`);
      if (projectId !== undefined && (typeof projectId !== 'string' || !projectId)) problems.push('projectId: must be a non-empty project id');
      if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `The conversation cannot be started:\n- ${problems.join('\n- ')}`, { problems });
      if (projectId !== undefined && !((await projectExists(db, projectId)) && (await users.isMember(projectId, actor)))) {
        // Like NOT_FOUND elsewhere: a non-member learns nothing about which project ids exist.
        throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist or you are not a member. Check the id (GET /api/projects).`, { projectId });
      }
      const at = now();
      const values = { ...(id === undefined ? {} : { id }), userId: actor.id, projectId: projectId ?? null, scenarioId: scenarioId ?? null, title: shortTitle(title), createdAt: at, updatedAt: at };
      if (!firstTurns?.length) return toSummary(await insertConversation(db, values), 0);
      const rows = toTurnRows(firstTurns);
      const row = await withTransaction(db, async (tx) => {
        const inserted = await insertConversation(tx, values);
        await insertTurns(tx, inserted.id, 1, rows, at);
        return inserted;
      });
      return toSummary(row, rows.length);
    },

    async append(conversationId, turns, actor) {
      const rows = toTurnRows(turns);
      // Access first, outside the transaction: on PGlite's single connection a query on `db` inside it would
      // wait for the transaction that waits for it. The owner and project of a conversation never change.
      await assertMayContinue(await readable(conversationId, actor), actor);
      return withTransaction(db, async (tx) => {
        // The row lock serialises appends to one conversation: the second waits, then numbers after the first.
        if (!(await selectConversation(tx, conversationId, { lock: true }))) throw notFound(conversationId);
        return insertTurns(tx, conversationId, (await selectLastSeq(tx, conversationId)) + 1, rows, now());
      });
    },

    async get(id, actor) {
      const row = await readable(id, actor);
      const turns = await selectTurns(db, id);
      return { ...toSummary(row, turns.length), summary: row.summary, summarizedThroughSeq: row.summarizedThroughSeq, turns };
    },

    async assertMayContinue(id, actor, scenarioId) {
      await assertMayContinue(await readable(id, actor), actor, scenarioId);
    },

    async list(actor, options = {}) {
      return selectConversations(db, { userId: actor.id, projectId: options.projectId, scenarioId: options.scenarioId, limit: listLimit(options) });
    },

    async history(conversationId, strategy, historyDeps) {
      assertHistoryStrategy(strategy);
      const { actor } = historyDeps;
      const row = await readable(conversationId, actor);
      await assertMayContinue(row, actor, historyDeps.scenarioId);
      const turns = await selectTurns(db, conversationId);
      return buildHistory(turns, strategy, {
        summary: row.summary,
        summarizedThroughSeq: row.summarizedThroughSeq,
        summarize: (previousSummary, fallenOut) => {
          const llm = historyDeps.llm ?? deps.llm;
          if (!llm) throw new ClinAgentError('LLM_NOT_CONFIGURED', 'The summary history strategy needs the LLM gateway; pass it to createConversationStore or history().');
          return summarizeTurns(llm, { previousSummary, turns: fallenOut }, { trace: historyDeps.trace, model: historyDeps.model, signal: historyDeps.signal, agents: deps.agents });
        },
        save: (summary, throughSeq) => updateSummary(db, conversationId, summary, throughSeq),
      });
    },

    async engineRef(conversationId, actor) {
      const row = await readable(conversationId, actor);
      await assertMayContinue(row, actor);
      return row.engineRef ?? null;
    },

    async setEngineRef(conversationId, ref, actor) {
      await assertMayContinue(await readable(conversationId, actor), actor);
      await updateEngineRef(db, conversationId, { type: ref.type, conversationId: ref.conversationId });
    },
  };
}

function assertWriter(actor: User): void {
  if (!WRITER_ROLES.has(actor.role)) {
    throw new ClinAgentError('FORBIDDEN', `Your role "${actor.role}" can only read, so it cannot hold agent conversations. Ask an admin for the coordinator, PI or admin role.`, { role: actor.role, needs: [...WRITER_ROLES] });
  }
}

function shortTitle(title: string): string {
  const oneLine = title.replace(/\s+/g, ' ').trim();
  const chars = [...oneLine];
  return chars.length <= MAX_TITLE_CHARS ? oneLine : `${chars.slice(0, MAX_TITLE_CHARS - 1).join('')}…`;
}

function listLimit(options: ListConversationsOptions): number {
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new ClinAgentError('VALIDATION_FAILED', `limit: must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${JSON.stringify(options.limit)}.`, { field: 'limit' });
  }
  return limit;
}
