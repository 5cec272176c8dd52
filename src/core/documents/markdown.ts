import type { DocumentBlock } from './blocks.js';

/**
 * Characters that change meaning anywhere in a line: emphasis, code, links, raw HTML, entities, table cells,
 * strikethrough, and `#` (a heading at the start of a line, harmless escaped elsewhere). CommonMark lets any ASCII
 * punctuation be backslash-escaped, so escaping shows the character as typed.
 */
const INLINE_SIGNIFICANT = /[\\`*_[\]<>|~#&]/g;
/** Markers that only count at the start of a line: list items, thematic breaks, setext underlines, ordered lists. */
const LINE_START = /^([-+=])|^(\d+)([.)])/;

/** `line` escaped where it follows other text on its line (after `## `, `**Label:** ` or `| `). */
function escapeInline(line: string): string {
  return line.trim().replace(INLINE_SIGNIFICANT, '\\$&');
}

/** `line` escaped where it starts a line of the document, so it cannot open a list, a rule or a heading underline. */
function escapeLineStart(line: string): string {
  // Leading spaces are dropped (escapeInline trims): four of them after a blank line would start a code block.
  return escapeInline(line).replace(LINE_START, (_match, marker: string | undefined, digits: string | undefined, delimiter: string | undefined) =>
    marker ? `\\${marker}` : `${digits}\\${delimiter}`,
  );
}

/**
 * User text as the lines of one Markdown element, escaped; blank lines dropped, so a value cannot end its list
 * or table. Every line after the first starts a line of the document; the first does when `startsLine`.
 */
function lines(text: string, startsLine: boolean): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .filter((line) => line.trim() !== '')
    .map((line, index) => (index > 0 || startsLine ? escapeLineStart(line) : escapeInline(line)));
}

/** Lines kept as lines inside one element: a backslash before the newline is CommonMark's hard line break. */
const joinHard = (text: string, startsLine: boolean, indent = '') => lines(text, startsLine).join(`\\\n${indent}`);

function table(columns: string[], rows: string[][]): string {
  // In a GFM table a cell is one line; <br> is the usual line break inside it (user `<` is escaped, so only ours is HTML).
  const cell = (text: string) => text.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '').map(escapeInline).join('<br>');
  const row = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [row(columns), `| ${columns.map(() => '---').join(' | ')} |`, ...rows.map(row)].join('\n');
}

function list(ordered: boolean, items: string[]): string {
  return items
    .map((item, index) => {
      const marker = ordered ? `${index + 1}.` : '-';
      return `${marker} ${joinHard(item, true, ' '.repeat(marker.length + 1))}`;
    })
    .join('\n');
}

function block(item: DocumentBlock): string {
  switch (item.kind) {
    case 'heading': return `${'#'.repeat(item.level)} ${item.text.split(/\r\n|\r|\n/).map(escapeInline).join(' ')}`;
    case 'paragraph': return joinHard(item.text, true);
    case 'field': return `**${escapeInline(item.label)}:** ${joinHard(item.value, false)}`;
    case 'list': return list(item.ordered, item.items);
    case 'table': return table(item.columns, item.rows);
    // Every line of the note carries the quote marker, so a line of user text cannot leave the quote.
    case 'note': return `> **${escapeInline(item.label)}:** ${joinHard(item.text, false, '> ')}`;
  }
}

/** The blocks as one Markdown (GFM) document, blocks separated by a blank line, ending with a newline. */
export function renderMarkdown(blocks: readonly DocumentBlock[]): string {
  return `${blocks.map(block).join('\n\n')}\n`;
}
