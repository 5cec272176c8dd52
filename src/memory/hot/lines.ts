import type { HotMemoryLine, HotMemorySection, MemoryLineSource } from '../types.js';

/** Rendering order, and the only sections a line may have. */
export const SECTIONS: readonly HotMemorySection[] = ['preferences', 'state', 'prohibitions'];

export function isSection(value: unknown): value is HotMemorySection {
  return typeof value === 'string' && (SECTIONS as readonly string[]).includes(value);
}

const SOURCE_KINDS: ReadonlySet<string> = new Set<MemoryLineSource['kind']>(['turn', 'record', 'report', 'feedback', 'user']);

export function isSource(value: unknown): value is MemoryLineSource {
  const source = value as Partial<MemoryLineSource> | null;
  return typeof source === 'object' && source !== null && typeof source.kind === 'string' && SOURCE_KINDS.has(source.kind) && typeof source.ref === 'string';
}

/** A markdown line cannot hold a line break, so stored text is one line with single spaces. */
export function cleanText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * When two lines say the same thing: same section and same text ignoring case, spacing and width
 * (NFKC folds full-width ＰＩ and half-width PI, common in Chinese input methods, into one form).
 */
export function lineKey(line: Pick<HotMemoryLine, 'section' | 'text'>): string {
  return `${line.section}\u0000${cleanText(line.text.normalize('NFKC')).toLowerCase()}`;
}

export function makeLine(section: HotMemorySection, text: string, source: MemoryLineSource, addedBy = '', addedAt = ''): HotMemoryLine {
  return { section, text: cleanText(text), source, addedBy, addedAt };
}

/** Lines in section order, keeping the order within a section (Array.prototype.sort is stable). */
export function sortBySection(lines: readonly HotMemoryLine[]): HotMemoryLine[] {
  return [...lines].sort((a, b) => SECTIONS.indexOf(a.section) - SECTIONS.indexOf(b.section));
}
