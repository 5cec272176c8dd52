import type { HotMemoryLine, HotMemorySection } from '../../../api';
import type { MessageKey } from '../../../i18n/en';
import type { Translate } from '../../../i18n/translate';

export type LineSource = HotMemoryLine['source'];

/** Long ids (UUIDs) shortened for a list; the whole id stays in the title. */
export function shortId(id: string): string {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id) ? id.slice(0, 8) : id;
}

/** Where a memory line came from, as a message and its values: a conversation turn, a record, a report, feedback or a person. */
export function lineSourceMessage(source: LineSource): { key: MessageKey; vars: Record<string, string> } {
  switch (source.kind) {
    case 'turn': {
      // conversationId#seq
      const at = source.ref.lastIndexOf('#');
      const conversation = at > 0 ? source.ref.slice(0, at) : source.ref;
      const seq = at > 0 ? source.ref.slice(at + 1) : '';
      return seq
        ? { key: 'memory.source.turn', vars: { conversation: shortId(conversation), seq } }
        : { key: 'memory.source.conversation', vars: { conversation: shortId(conversation) } };
    }
    case 'record':
      return { key: 'memory.source.record', vars: { id: source.ref } };
    case 'report':
      return { key: 'memory.source.report', vars: { id: shortId(source.ref) } };
    case 'feedback':
      return { key: 'memory.source.feedback', vars: { id: shortId(source.ref) } };
    case 'user':
      return { key: 'memory.source.user', vars: { name: source.ref } };
    default:
      return { key: 'memory.source.other', vars: { kind: String((source as { kind: unknown }).kind), ref: (source as { ref: string }).ref } };
  }
}

export function lineSourceLabel(t: Translate, source: LineSource): string {
  const { key, vars } = lineSourceMessage(source);
  return t(key, vars);
}

/** The sections in the order the memory document lists them. */
export const SECTIONS: readonly HotMemorySection[] = ['preferences', 'state', 'prohibitions'];

/** Lines grouped by section, each section in document order; empty sections are kept so the view can say so. */
export function linesBySection(lines: HotMemoryLine[]): Array<{ section: HotMemorySection; lines: HotMemoryLine[] }> {
  return SECTIONS.map((section) => ({ section, lines: lines.filter((line) => line.section === section) }));
}

/** What the editor opens with when the memory has never been written: the three sections, empty. */
export const EMPTY_MEMORY_TEMPLATE = '## Preferences\n\n## Current state\n\n## Prohibitions\n';

/** The share of the cap used, 0-100, for the bar; over the cap shows full. */
export function usedPercent(tokens: number, maxTokens: number): number {
  if (maxTokens <= 0) return tokens > 0 ? 100 : 0;
  return Math.min(100, Math.max(0, Math.round((tokens / maxTokens) * 100)));
}
