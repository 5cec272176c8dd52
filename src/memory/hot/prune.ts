import { appendAudit } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { countTokens } from '../../core/tokenizer.js';
import type { TraceScope } from '../../core/trace/store.js';
import type { HotMemoryLine, MemoryDeps, MemoryOverflow, MemoryWritePath } from '../types.js';
import { lineKey, sortBySection } from './lines.js';
import { renderHotMemory } from './markdown.js';
import { lockMemory, selectMemory, setOverflow } from './memory-queries.js';
import { runDefinition } from '../../runtime/loop/index.js';
import { PRUNE_AGENT, PRUNE_DEFINITION, PRUNER } from './prune-definition.js';
import { writeHotMemory } from './write-hot-memory.js';
import { withTransaction } from '../../core/db/transaction.js';

/** The condensed memory aims below the cap, so the next days' facts fit without pruning again at once. */
const TARGET_SHARE = 0.7;
/** An overflow notice keeps at most this many pending lines, so repeated overflows cannot grow it without end. */
const MAX_PENDING_LINES = 200;

interface PruneOptions {
  pendingLines?: HotMemoryLine[];
  /** The write that needed the pruning (distillation); recorded on the overflow notice. */
  path?: MemoryWritePath;
}

export interface PruneResult {
  pruned: boolean;
  fits: boolean;
  tokens: number;
}

/**
 * When the memory plus `pendingLines` is over the cap, the model condenses it (seed 002 §5.1: "let the AI
 * summarise or notify the admin"); the condensed memory is written as a new version through the one write
 * function, so the previous version stays in the history. When that still does not fit, nothing is stored:
 * the admin gets an overflow notice with the lines that were left out.
 */
export async function pruneHotMemory(deps: MemoryDeps, projectId: string, options: PruneOptions, trace?: TraceScope): Promise<PruneResult> {
  const maxTokens = deps.config.hotMaxTokens;
  const current = (await selectMemory(deps.db, projectId))?.lines ?? [];
  const pending = newLinesOnly(current, options.pendingLines ?? []);
  const candidate = sortBySection([...current, ...pending]);
  const tokens = countTokens(renderHotMemory(candidate));
  if (tokens <= maxTokens) {
    if (!pending.length) return { pruned: false, fits: true, tokens };
    const written = await writeHotMemory(deps, { projectId, actor: PRUNER, path: options.path ?? 'pruning', change: (lines) => [...lines, ...pending], reason: 'pending lines fit under the cap' });
    return { pruned: false, fits: true, tokens: written.memory.tokens };
  }

  const run = trace ? undefined : await deps.trace.start({ kind: 'job', name: 'memory.prune', projectId, adminOnly: true, input: { lines: candidate.length, tokens, maxTokens } });
  const scope = trace ?? run!;
  try {
    const result = await condenseAndWrite(deps, scope, { projectId, candidate, pending, tokens, path: options.path ?? 'pruning' });
    await run?.finish({ status: 'success', output: result });
    return result;
  } catch (error) {
    await run?.finish({ status: 'failed', error: errorMessage(error) });
    throw error;
  }
}

async function condenseAndWrite(
  deps: MemoryDeps,
  trace: TraceScope,
  input: { projectId: string; candidate: HotMemoryLine[]; pending: HotMemoryLine[]; tokens: number; path: MemoryWritePath },
): Promise<PruneResult> {
  const maxTokens = deps.config.hotMaxTokens;
  const condensed = await askToCondense(deps, trace, input.candidate);
  if (!condensed.ok) return overflow(deps, input, `the model gave no usable condensed memory in ${PRUNE_DEFINITION.stop.attempts} tries: ${condensed.problem}`);
  const condensedTokens = countTokens(renderHotMemory(sortBySection(condensed.lines)));
  if (condensedTokens > maxTokens) return overflow(deps, input, `the condensed memory was still ${condensedTokens} tokens`);
  try {
    const written = await writeHotMemory(deps, {
      projectId: input.projectId,
      actor: PRUNER,
      path: 'pruning',
      change: () => condensed.lines,
      reason: `condensed from ${input.tokens} to ${condensedTokens} tokens (cap ${maxTokens})`,
    });
    return { pruned: written.changed, fits: true, tokens: written.memory.tokens };
  } catch (error) {
    // Kept lines that were rewritten keep their old text when the model only changed their spacing, so the
    // stored result can differ slightly from what was counted; the cap is checked again in the write.
    if (ClinAgentError.isInstance(error) && error.code === 'MEMORY_OVER_CAP') return overflow(deps, input, `the condensed memory was still ${String(error.details.tokens)} tokens`);
    throw error;
  }
}

type Condensed = { ok: true; lines: HotMemoryLine[] } | { ok: false; problem: string };

async function askToCondense(deps: MemoryDeps, trace: TraceScope, lines: HotMemoryLine[]): Promise<Condensed> {
  const maxTokens = deps.config.hotMaxTokens;
  const outcome = await runDefinition(deps.agents.get(PRUNE_AGENT), {
    llm: deps.llm,
    trace,
    input: { lines, maxTokens, targetTokens: Math.floor(maxTokens * TARGET_SHARE) },
  });
  if (outcome.kind === 'final') return { ok: true, lines: outcome.value };
  const last = outcome.kind === 'stopped' ? outcome.lastFailure : undefined;
  // A model that cannot be reached is one more failed try: the admin notice says so instead of the job dying.
  return { ok: false, problem: !last ? 'no answer' : last.kind === 'answer' ? last.problems.join('; ') : last.error };
}

/** Stores nothing of the memory; records the notice the admin sees on GET, with the lines that were left out. */
async function overflow(deps: MemoryDeps, input: { projectId: string; pending: HotMemoryLine[]; tokens: number; path: MemoryWritePath }, reason: string): Promise<PruneResult> {
  const maxTokens = deps.config.hotMaxTokens;
  await withTransaction(deps.db, async (tx) => {
    const row = await lockMemory(tx, input.projectId);
    // An earlier notice's lines are not stored either; the new notice keeps them so nothing is lost unseen.
    const pendingLines = newLinesOnly([], [...(row.overflow?.pendingLines ?? []), ...input.pending]).slice(-MAX_PENDING_LINES);
    const notice: MemoryOverflow = {
      at: new Date().toISOString(),
      path: input.path,
      tokens: input.tokens,
      maxTokens,
      pendingLines,
      message: `Hot memory would be ${input.tokens} tokens, over the cap of ${maxTokens}, and automatic pruning could not make it fit (${reason}). Nothing was changed; ${pendingLines.length} new line(s) were not stored and are listed here. Remove or shorten lines in the memory editor, then add back what still matters.`,
    };
    await setOverflow(tx, input.projectId, notice);
    await appendAudit(tx, {
      projectId: input.projectId,
      entityType: 'memory',
      entityId: input.projectId,
      action: 'memory.overflow',
      actor: PRUNER,
      newValue: { tokens: input.tokens, maxTokens, path: input.path, pendingLines: pendingLines.length },
      reason,
    });
  });
  deps.logger.warn({ projectId: input.projectId, tokens: input.tokens, maxTokens, pendingLines: input.pending.length }, 'hot memory is over its cap after pruning; overflow notice set for the admin');
  return { pruned: false, fits: false, tokens: input.tokens };
}

/** `lines` without those already in `current` and without repeats among themselves. */
function newLinesOnly(current: readonly HotMemoryLine[], lines: readonly HotMemoryLine[]): HotMemoryLine[] {
  const seen = new Set(current.map(lineKey));
  return lines.filter((line) => {
    const key = lineKey(line);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
