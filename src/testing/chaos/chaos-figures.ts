import type { ChaosProcess } from './chaos-process.js';
import { resumeAfterRestart, type Resume } from './resume-probe.js';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : Number.NaN);

/** Resumes that were measured to the end: not superseded by a later kill of the process that took the run over. */
export const measured = (resumes: Resume[]) => resumes.filter((r) => !r.superseded && r.resumedAt !== undefined);

/**
 * The figures of one chaos run, printed whether it passed or not: kills per process kind, resumes (longest and p50
 * after the process was back, longest after the kill), restarts, and whatever else the engine measured.
 */
export function chaosFigures(options: { engine: string; seed: number; durationMs: number; processes: ChaosProcess[]; kills: Array<{ process: string; kind: string }>; resumes: Resume[]; extra?: Array<[string, string]> }): string {
  const done = measured(options.resumes);
  const afterRestart = done.map(resumeAfterRestart).sort((a, b) => a - b);
  const afterKill = done.map((r) => r.resumedAt! - r.killedAt).sort((a, b) => a - b);
  const byKind = (kind: string) => options.kills.filter((k) => k.kind === kind).length;
  const starts = options.processes.flatMap((p) => p.starts().slice(1));
  const startMs = starts.map((s) => s.readyAt - s.spawnedAt).sort((a, b) => a - b);
  const rows: Array<[string, string]> = [
    ['engine', options.engine],
    ['seed (CHAOS_SEED to replay)', String(options.seed)],
    ['kills (SIGKILL)', `${options.kills.length}: server ${byKind('server')}, workers ${byKind('worker')}`],
    ['restarts: up again after (p50 / longest)', `${starts.length}: ${seconds(percentile(startMs, 0.5))} / ${seconds(startMs.at(-1) ?? Number.NaN)}; ${starts.filter((s) => s.attempts > 1).length} needed more than one start`],
    ['interrupted runs measured', `${done.length} (${options.resumes.length - done.length} taken over and killed again, measured from that kill)`],
    ['resume after the process was back: p50 / longest', `${seconds(percentile(afterRestart, 0.5))} / ${seconds(afterRestart.at(-1) ?? Number.NaN)} (promise: 10 s)`],
    ['resume after the kill: p50 / longest', `${seconds(percentile(afterKill, 0.5))} / ${seconds(afterKill.at(-1) ?? Number.NaN)}`],
    ['leases lost by a live owner ("lost the lease" warnings)', options.processes.map((p) => `${p.name} ${p.lostLeases()}`).join(', ')],
    ['processes that exited on their own', String(options.processes.reduce((n, p) => n + p.exitsOnTheirOwn().length, 0))],
    ...(options.extra ?? []),
    ['chaos run took', seconds(options.durationMs)],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return [`Chaos test (${options.engine})`, ...rows.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`)].join('\n');
}
