import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { z } from 'zod';
import { fitToBudget, trimToTokens } from '../../core/tokenizer.js';
import type { TraceScope } from '../../core/trace/store.js';
import { agentId, jsonAnswer, type AgentDefinition } from '../../runtime/definitions/index.js';
import { oneRoundAnswer, runDefinition } from '../../runtime/loop/index.js';
import type { HotMemoryLine, MemoryDeps, MemoryLineSource } from '../types.js';
import { advanceDistilledThrough, selectMemory } from './memory-queries.js';
import { markFeedbackDistilled, selectLastTurnId, selectTurnsToDistill, selectUnreadFeedback, type FeedbackToDistill, type TurnToDistill } from './distill-queries.js';
import { nothingStored } from '../model-output.js';
import { looksLikeIdentifier } from './identifiers.js';
import { cleanText, isSection, makeLine } from './lines.js';
import { checkOwnWords } from './own-words.js';
import { buildDistillMessages, DISTILL_OUTPUT, type LabelledText } from './prompts.js';
import { pruneHotMemory, type PruneResult } from './prune.js';
import { writeHotMemory } from './write-hot-memory.js';
import { withTransaction } from '../../core/db/transaction.js';

const DISTILLER = 'memory-distiller';

/** Conversation text one run reads at most; a busy project catches up over several runs, oldest turns first. */
const TURN_BUDGET_TOKENS = 6000;
/** One long turn (a pasted protocol section) is cut, so it can never use the whole budget and stall the watermark. */
const TURN_MAX_TOKENS = 1000;
const TURN_ROWS_PER_RUN = 500;
const FEEDBACK_PER_RUN = 50;
const FEEDBACK_ANSWER_TOKENS = 150;
/**
 * What the model may write: new facts of a day, each a short line; well above a busy day's answer, far below what
 * would crowd the memory. An answer that reaches it was cut off and is refused (oneRoundAnswer), never repaired.
 */
const DISTILL_REPLY_MAX_TOKENS = 2000;

interface DistillResult {
  changed: boolean;
  /** Facts kept for the memory (duplicates of lines already there included). */
  facts: number;
  turns: number;
  feedback: number;
  /** Proposed facts refused: not the words of a person in the turn or feedback they cite (own-words.ts). */
  refused: number;
}

/** Where a label the model cites points, and the person's own words there (none for an assistant answer). */
interface Cited {
  source: MemoryLineSource;
  said?: string;
}

interface RefusedFact {
  text: string;
  cites: string;
  reason: string;
}

/**
 * The daily distillation (seed 002: hot memory is refined by the AI every day). It reads the project's user
 * and assistant turns after the watermark and its unread answer feedback, asks the model for new durable
 * facts, and writes them through the one write function; when they would take the memory over the cap the
 * pruning runs instead. The watermark moves only through what the model read, and only after the model gave
 * a usable answer: an unusable one throws, the job retries, and the same turns are read again.
 */
export async function distillHotMemory(deps: MemoryDeps, projectId: string): Promise<DistillResult> {
  const memory = await selectMemory(deps.db, projectId);
  const watermark = memory?.distilledThroughTurnId ?? 0;
  const { turns, throughTurnId } = await readTurns(deps.db, projectId, watermark);
  const feedback = await selectUnreadFeedback(deps.db, projectId, FEEDBACK_PER_RUN);
  if (!turns.length && !feedback.length) {
    // Only tool turns (or none) since the last run: nothing for the model, but they need not be looked at again.
    if (throughTurnId > watermark) await withTransaction(deps.db, (tx) => advanceDistilledThrough(tx, projectId, throughTurnId));
    return { changed: false, facts: 0, turns: 0, feedback: 0, refused: 0 };
  }

  // Admin-only: the prompt holds users' own conversations, which the project's other members may not read.
  const trace = await deps.trace.start({ kind: 'job', name: 'memory.distill', projectId, adminOnly: true, input: { afterTurnId: watermark, throughTurnId, turns: turns.length, feedback: feedback.length } });
  try {
    const labels = new Map<string, Cited>();
    // Conversations numbered by first appearance: the model sees which turns belong together without long ids.
    const conversationNumbers = new Map([...new Set(turns.map((t) => t.conversationId))].map((id, i) => [id, i + 1]));
    const turnTexts: LabelledText[] = turns.map((turn, i) => {
      // An assistant turn is the model's own text: a fact must come from what a person said, never from it.
      labels.set(`T${i + 1}`, { source: { kind: 'turn', ref: `${turn.conversationId}#${turn.seq}` }, said: turn.role === 'user' ? turn.content : undefined });
      return { label: `T${i + 1}`, text: turnText(turn, conversationNumbers.get(turn.conversationId)!) };
    });
    const feedbackTexts: LabelledText[] = feedback.map((item, i) => {
      labels.set(`F${i + 1}`, { source: { kind: 'feedback', ref: item.id }, said: item.comment.trim() || undefined });
      return { label: `F${i + 1}`, text: feedbackText(item) };
    });
    const { facts, refused } = await askForFacts(deps, trace, projectId, { memory: memory?.content ?? '', turns: turnTexts, feedback: feedbackTexts }, labels);
    const outcome = facts.length ? await writeFacts(deps, projectId, facts, trace, { turns: turns.length, feedback: feedback.length }) : { changed: false };
    await withTransaction(deps.db, async (tx) => {
      await advanceDistilledThrough(tx, projectId, throughTurnId);
      await markFeedbackDistilled(tx, feedback, new Date());
    });
    const result = { changed: outcome.changed, facts: facts.length, turns: turns.length, feedback: feedback.length, refused: refused.length };
    // The trace is admin-only and already holds the conversation: the refused lines are shown there with why.
    await trace.finish({ status: 'success', output: { ...result, ...(refused.length ? { refusedFacts: refused } : {}), ...('prune' in outcome ? { prune: outcome.prune } : {}) } });
    return result;
  } catch (error) {
    await trace.finish({ status: 'failed', error: errorMessage(error) });
    throw error;
  }
}

const NOTHING_STORED = 'Nothing was stored: the hot memory stays as it was, and the same conversation turns are read again on the next try.';

/**
 * The model's answer as far as its shape goes: an object with a list of facts. Each fact is read leniently after
 * (one without a section or text is left out), and checked against the words of the person it cites (own-words.ts).
 */
const distilledSchema = z.object({ facts: z.array(z.unknown()) });

/**
 * The daily distillation's model call: one round, JSON, no tools. An answer cut off at the token limit is refused
 * (never repaired into a shorter list of facts), and nothing is stored: the job retries with the same turns.
 */
/** Its id in the registry, typed: `agents.get(DISTILL_AGENT)`. */
export const DISTILL_AGENT = agentId<DistillInput, unknown[]>('memory_distill');

export const DISTILL_DEFINITION: AgentDefinition<DistillInput, unknown[]> = {
  id: DISTILL_AGENT,
  name: 'Hot-memory distillation',
  description: "Reads a project's recent conversation turns and answer feedback and proposes durable facts for its hot memory.",
  sourceFile: 'builtin:src/memory/hot/distill.ts',
  instructions: buildDistillMessages,
  tools: [],
  decision: { mode: 'native' },
  output: DISTILL_OUTPUT,
  answer: jsonAnswer(distilledSchema, {
    name: DISTILL_OUTPUT.name,
    // Only the top level: one odd fact is left out when the facts are read, not a reason to refuse the others.
    parserSchema: { type: 'object', properties: { facts: { type: 'array' } }, required: ['facts'] },
    missingFields: 'fill',
    map: (answer) => answer.facts,
  }),
  stop: { maxRounds: 1 },
  history: { strategy: 'none' },
  model: { temperature: 0, jsonMode: true, maxTokens: DISTILL_REPLY_MAX_TOKENS },
  engine: { type: 'builtin' },
};

type DistillInput = Parameters<typeof buildDistillMessages>[0];

async function askForFacts(deps: MemoryDeps, trace: TraceScope, projectId: string, prompt: DistillInput, labels: ReadonlyMap<string, Cited>) {
  try {
    const outcome = await runDefinition(deps.agents.get(DISTILL_AGENT), { llm: deps.llm, trace, input: prompt });
    const what = `distillation answer for project "${projectId}"`;
    const facts = oneRoundAnswer(outcome, what, { projectId }, (why) => `The model's ${what} could not be read (${why}).`);
    return readFacts(deps, projectId, facts, labels);
  } catch (error) {
    throw nothingStored(error, (why) => `${why} ${NOTHING_STORED}`);
  }
}

/**
 * The turns this run reads and the id the watermark may move to. All of them when they fit the budget (then
 * also past trailing tool turns, up to the newest turn id); else the oldest that fit, and the watermark stops
 * at the last of those.
 */
async function readTurns(db: Db, projectId: string, watermark: number): Promise<{ turns: TurnToDistill[]; throughTurnId: number }> {
  const lastId = await selectLastTurnId(db, projectId, watermark);
  if (lastId === undefined) return { turns: [], throughTurnId: watermark };
  const rows = await selectTurnsToDistill(db, projectId, watermark, lastId, TURN_ROWS_PER_RUN);
  // An assistant turn that only called tools has no text to read.
  const withText = rows.filter((row) => row.content.trim()).map((row) => ({ ...row, content: trimToTokens(row.content, TURN_MAX_TOKENS) }));
  const kept = fitToBudget(withText, (turn) => turnText(turn, 0), TURN_BUDGET_TOKENS);
  if (kept.length < withText.length) return { turns: kept, throughTurnId: kept.at(-1)?.id ?? watermark };
  return { turns: kept, throughTurnId: rows.length < TURN_ROWS_PER_RUN ? lastId : (rows.at(-1)?.id ?? watermark) };
}

function turnText(turn: TurnToDistill, conversation: number): string {
  return `(conversation ${conversation}, ${turn.role}) ${turn.content}`;
}

function feedbackText(item: FeedbackToDistill): string {
  const answer = cleanText(trimToTokens(item.answer, FEEDBACK_ANSWER_TOKENS));
  const comment = item.comment.trim() ? ` Comment: ${item.comment.trim()}` : ' No comment.';
  return `Thumbs ${item.rating} on the answer "${answer}".${comment}`;
}

function readFacts(deps: MemoryDeps, projectId: string, proposed: readonly unknown[], labels: ReadonlyMap<string, Cited>): { facts: HotMemoryLine[]; refused: RefusedFact[] } {
  const now = new Date().toISOString();
  const facts: HotMemoryLine[] = [];
  const refused: RefusedFact[] = [];
  let identifiers = 0;
  for (const item of proposed as Array<Record<string, unknown> | null>) {
    if (!isSection(item?.section) || typeof item.text !== 'string' || !cleanText(item.text)) continue;
    if (looksLikeIdentifier(item.text)) {
      identifiers++;
      continue;
    }
    const label = typeof item.source === 'string' ? item.source.replace(/^\[|\]$/g, '').trim().toUpperCase() : '';
    const cited = labels.get(label);
    const verdict = !cited
      ? { ok: false as const, reason: 'it cites no turn or feedback of this run' }
      : cited.said === undefined
        ? { ok: false as const, reason: cited.source.kind === 'turn' ? "it cites the assistant's answer, not what a person said" : 'it cites a rating without a comment' }
        : checkOwnWords(item.text, cited.said);
    if (!verdict.ok) {
      refused.push({ text: cleanText(item.text), cites: label, reason: verdict.reason });
      continue;
    }
    facts.push(makeLine(item.section, item.text, cited!.source, DISTILLER, now));
  }
  // Counted, never quoted: the point is that the text stays out of logs as well.
  if (identifiers) deps.logger.warn({ projectId, dropped: identifiers }, 'distilled facts that looked like personal identifiers were dropped');
  if (refused.length) deps.logger.warn({ projectId, refused: refused.length }, 'distilled facts that were not a person\'s own words were refused; the trace lists them');
  return { facts, refused };
}

async function writeFacts(deps: MemoryDeps, projectId: string, facts: HotMemoryLine[], trace: TraceScope, read: { turns: number; feedback: number }): Promise<{ changed: boolean; prune?: PruneResult }> {
  try {
    const written = await writeHotMemory(deps, {
      projectId,
      actor: DISTILLER,
      path: 'distillation',
      change: (current) => [...current, ...facts],
      reason: `distilled from ${read.turns} conversation turn(s) and ${read.feedback} feedback item(s)`,
    });
    return { changed: written.changed };
  } catch (error) {
    if (!ClinAgentError.isInstance(error) || error.code !== 'MEMORY_OVER_CAP') throw error;
    const prune = await pruneHotMemory(deps, projectId, { pendingLines: facts, path: 'distillation' }, trace);
    return { changed: prune.pruned, prune };
  }
}
