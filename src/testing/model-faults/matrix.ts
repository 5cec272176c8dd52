import type { Fault } from './faults.js';
import type { CellResult } from './run-cell.js';

/** The agents x faults matrix as the suite prints it: ✓ green, ✗ red, · not run on this engine; then each red cell's problems. */
export function renderMatrix(results: readonly CellResult[], columns: readonly Fault[], options: { everyCell?: boolean } = {}): string {
  const engines = [...new Set(results.map((r) => r.engine))];
  const out: string[] = [];
  for (const engine of engines) {
    const mine = results.filter((r) => r.engine === engine);
    const rows = [...new Set(mine.map((r) => r.target))];
    const width = Math.max(...rows.map((r) => r.length), 6);
    const heads = columns.map((c, i) => `F${i}`);
    out.push(`\nModel faults on ${engine}: ${mine.filter((r) => r.ok).length}/${mine.length} cells green`);
    out.push(`${'agent'.padEnd(width)} | ${heads.map((h) => h.padEnd(4)).join('')}| seconds`);
    out.push(`${'-'.repeat(width)}-+-${'-'.repeat(heads.length * 4)}`);
    for (const row of rows) {
      const cells = columns.map((c) => {
        const cell = mine.find((r) => r.target === row && r.fault === c.id);
        return (cell ? (cell.ok ? '✓' : '✗') : '·').padEnd(4);
      });
      const seconds = mine.filter((r) => r.target === row).reduce((sum, r) => sum + r.ms, 0) / 1000;
      out.push(`${row.padEnd(width)} | ${cells.join('')}| ${seconds.toFixed(1)}`);
    }
    out.push(columns.map((c, i) => `F${i} ${c.id}: ${c.description}`).join('\n'));
    const red = mine.filter((r) => !r.ok);
    if (red.length) out.push('Red cells:');
    if (options.everyCell) {
      out.push('Every cell:');
      for (const cell of mine) out.push(`  ${cell.ok ? '✓' : '✗'} ${cell.target} x ${cell.fault} (${cell.modelCalls} calls, ${cell.ms} ms): "${cell.shown}"`);
    }
    for (const cell of red) out.push(`  ✗ ${cell.target} x ${cell.fault} (${cell.modelCalls} model calls, ${cell.ms} ms): ${cell.problems.join('; ')}${cell.shown ? ` | the person got: "${cell.shown}"` : ''}`);
  }
  return out.join('\n');
}
