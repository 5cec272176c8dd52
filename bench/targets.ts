import os from 'node:os';
import { printTable } from './stats.js';

/** One figure the issue tracker holds us to (issue 22, "Measured"), against the reference it is measured above. */
interface Target {
  figure: string;
  measuredMs: number;
  targetMs: number;
  /** What the figure is measured above (a bare gateway call, its first token), for the ratio. */
  referenceMs: number;
  reference: string;
}

/**
 * Pass/fail against each target, with the ratio to the reference so a run on a slower or busier machine still
 * says something. The load average is printed because a shared 2-core runner can inflate every figure severalfold.
 */
export function printTargets(title: string, targets: Target[]): void {
  const [load1] = os.loadavg();
  printTable(`${title} (load average ${load1!.toFixed(1)} on ${os.cpus().length} cores)`, targets.map((t) => ({
    figure: t.figure,
    'p50 ms': t.measuredMs,
    'target ms': t.targetMs,
    result: t.measuredMs <= t.targetMs ? 'PASS' : 'FAIL',
    'x reference': t.measuredMs / t.referenceMs,
    reference: `${t.reference} (${t.referenceMs.toFixed(3)} ms)`,
  })));
}
