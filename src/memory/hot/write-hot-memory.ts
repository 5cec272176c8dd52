import { appendAudit } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { countTokens } from '../../core/tokenizer.js';
import type { HotMemoryLine, MemoryDeps, MemoryWritePath, MemoryWriteResult } from '../types.js';
import { cleanText, isSection, lineKey, sortBySection } from './lines.js';
import { renderHotMemory } from './markdown.js';
import { insertVersion, lockMemory, updateMemory } from './memory-queries.js';
import { toView } from './view.js';
import { withTransaction } from '../../core/db/transaction.js';

interface HotMemoryWrite {
  projectId: string;
  /** A user's name or a job's name ('memory-distiller', 'memory-pruner'): recorded on new lines, the version and the audit entry. */
  actor: string;
  path: MemoryWritePath;
  /** The lines the memory should hold, computed from the locked current lines; duplicates are removed afterwards. */
  change: (current: HotMemoryLine[]) => HotMemoryLine[];
  reason?: string;
  /** The version the writer saw (the editor); a newer stored version refuses the write. */
  baseVersion?: number;
}

/**
 * A person acting on the memory (editor, rollback) or a pruning that made it fit has dealt with an overflow
 * notice; a chat fact or a distillation that happens to fit has not, so the notice and its pending lines stay
 * for the admin.
 */
const CLEARS_OVERFLOW: ReadonlySet<MemoryWritePath> = new Set(['editor', 'rollback', 'pruning']);

/**
 * The one way hot memory is written (chat and API facts, the editor, rollback, distillation, pruning), so the
 * rules hold on every path: one writer at a time per project, no duplicate lines, every line keeps where it
 * came from, the stored memory never exceeds the token cap, and every change is a new version with its audit
 * entry. Writing facts that are already there changes nothing: no version, no audit entry, nothing removed.
 */
export async function writeHotMemory(deps: Pick<MemoryDeps, 'db' | 'config'>, write: HotMemoryWrite): Promise<MemoryWriteResult> {
  const maxTokens = deps.config.hotMaxTokens;
  return withTransaction(deps.db, async (tx) => {
    const row = await lockMemory(tx, write.projectId);
    if (write.baseVersion !== undefined && write.baseVersion !== row.version) {
      throw new ClinAgentError('CONFLICT_STATE', `The hot memory changed since you opened it (now version ${row.version}, you edited version ${write.baseVersion}); reload it and make your change again.`, {
        projectId: write.projectId,
        version: row.version,
        baseVersion: write.baseVersion,
      });
    }
    const current = row.lines;
    const { lines, duplicates } = mergeLines(current, write.change(structuredClone(current)), write.actor, new Date().toISOString());
    const content = renderHotMemory(lines);
    if (content === row.content) return { changed: false, memory: toView(write.projectId, row, maxTokens), duplicates };

    const tokens = countTokens(content);
    if (tokens > maxTokens) {
      throw new ClinAgentError(
        'MEMORY_OVER_CAP',
        `Hot memory would be ${tokens} tokens, over the cap of ${maxTokens}. Remove or shorten lines (the memory editor shows each one), or ask an admin to raise MEMORY_HOT_MAX_TOKENS.`,
        { tokens, maxTokens, projectId: write.projectId, path: write.path },
      );
    }

    const version = row.version + 1;
    const updated = await updateMemory(tx, write.projectId, {
      version,
      lines,
      content,
      tokens,
      updatedBy: write.actor,
      updatedAt: new Date(),
      ...(CLEARS_OVERFLOW.has(write.path) ? { overflow: null } : {}),
    });
    await insertVersion(tx, { projectId: write.projectId, version, lines, content, tokens, path: write.path, actor: write.actor, reason: write.reason ?? '' });
    const before = new Set(current.map(lineKey));
    const after = new Set(lines.map(lineKey));
    // Last in the transaction: the entry commits with the change it describes, and holds the chain lock briefly.
    await appendAudit(tx, {
      projectId: write.projectId,
      entityType: 'memory',
      entityId: write.projectId,
      action: `memory.${write.path}`,
      actor: write.actor,
      oldValue: { version: row.version, tokens: row.tokens },
      newValue: { version, tokens, added: lines.filter((l) => !before.has(lineKey(l))).map((l) => l.text), removed: current.filter((l) => !after.has(lineKey(l))).map((l) => l.text) },
      reason: write.reason ?? '',
    });
    return { changed: true, memory: toView(write.projectId, updated, maxTokens), duplicates };
  });
}

/**
 * The first line of each (section, normalised text) wins. A line that was already in the memory keeps its
 * source, author and time even when the new text differs in case or spacing; a new line gets the writer and
 * the time when it carries none (a rollback restores lines with their original ones).
 */
function mergeLines(current: readonly HotMemoryLine[], proposed: readonly HotMemoryLine[], actor: string, now: string): { lines: HotMemoryLine[]; duplicates: string[] } {
  const existing = new Map(current.map((line) => [lineKey(line), line]));
  const seen = new Set<string>();
  const lines: HotMemoryLine[] = [];
  const duplicates: string[] = [];
  for (const line of proposed) {
    if (!isSection(line.section)) {
      throw new ClinAgentError('VALIDATION_FAILED', `Hot memory line "${line.text}" has section "${String(line.section)}"; use preferences, state or prohibitions.`, { field: 'section' });
    }
    const text = cleanText(line.text);
    if (!text) continue;
    const key = lineKey({ section: line.section, text });
    if (seen.has(key)) {
      duplicates.push(text);
      continue;
    }
    seen.add(key);
    const before = existing.get(key);
    lines.push(before ? { ...before, text } : { section: line.section, text, source: line.source, addedBy: line.addedBy || actor, addedAt: line.addedAt || now });
  }
  return { lines: sortBySection(lines), duplicates };
}
