/** Small helpers shared by the benchmarks: percentiles and a fixed-width table. */
function percentile(sortedMs: number[], p: number): number {
  if (!sortedMs.length) return NaN;
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[index]!;
}

export function summarise(samplesMs: number[]): { p50: number; p99: number; mean: number } {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  console.log(`\n${title}`);
  if (!rows.length) return;
  const headers = Object.keys(rows[0]!);
  const cell = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v);
  const widths = headers.map((h) => Math.max(h.length, ...rows.map((r) => cell(r[h] ?? '').length)));
  console.log(headers.map((h, i) => h.padEnd(widths[i]!)).join('  '));
  for (const row of rows) console.log(headers.map((h, i) => cell(row[h] ?? '').padEnd(widths[i]!)).join('  '));
}
