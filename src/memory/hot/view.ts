import type { HotMemoryVersionView, HotMemoryView } from '../types.js';
import type { MemoryRow, MemoryVersionRow } from './memory-queries.js';

/** A project whose memory was never written reads as version 0, empty. */
export function toView(projectId: string, row: MemoryRow | undefined, maxTokens: number): HotMemoryView {
  const written = row !== undefined && row.version > 0;
  return {
    projectId,
    version: row?.version ?? 0,
    content: row?.content ?? '',
    lines: row?.lines ?? [],
    tokens: row?.tokens ?? 0,
    maxTokens,
    overflow: row?.overflow ?? null,
    updatedBy: written ? row.updatedBy : '',
    updatedAt: written ? row.updatedAt.toISOString() : null,
  };
}

export function toVersionView(row: MemoryVersionRow): HotMemoryVersionView {
  return { version: row.version, content: row.content, lines: row.lines, tokens: row.tokens, path: row.path, actor: row.actor, reason: row.reason, createdAt: row.createdAt.toISOString() };
}
