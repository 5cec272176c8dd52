/**
 * Writes CSV the way REDCap does: comma-separated, a cell quoted only when it holds a comma, quote, line
 * break or edge space, quotes doubled. LF line endings keep the committed files diff-friendly in git.
 */
export function toCsv(rows: ReadonlyArray<ReadonlyArray<string>>): string {
  return rows.map((row) => row.map(quoteCell).join(',')).join('\n') + '\n';
}

function quoteCell(cell: string): string {
  return /[",\r\n]|^\s|\s$/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}
