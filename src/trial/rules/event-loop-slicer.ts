import { setImmediate } from 'node:timers/promises';

/**
 * How long rule evaluation may hold the event loop before letting it turn (HTTP requests, lease renewals, other
 * QC work). Short enough that nobody notices, long enough that yielding costs nothing measurable: thousands of
 * ordinary rules run in 10 ms. A single rule cannot be cut; the budget of `matches` (matching-budget.ts) bounds it.
 */
const SLICE_MS = 10;

/**
 * Rations the event loop among rule evaluations. Time is counted across every evaluation that shares the slicer,
 * not per evaluation: four QC workers each taking their own 10 ms (or their own slow rule) in the same loop turn
 * would hold the loop four times as long, and a health check would wait for all of them.
 */
export interface EventLoopSlicer {
  /** True when the evaluations sharing this slicer have held the loop for a slice since it last turned. */
  isSliceOver(): boolean;
  spend(ms: number): void;
  /** Resolves once the event loop has polled for I/O again, when a new slice begins. Shared by all waiters. */
  nextTurn(): Promise<void>;
}

export function createEventLoopSlicer(sliceMs = SLICE_MS): EventLoopSlicer {
  let spentMs = 0;
  let turn: Promise<void> | undefined;
  return {
    // A new slice always runs at least one rule, so a slice of 0 ms still makes progress.
    isSliceOver: () => spentMs > 0 && spentMs >= sliceMs,
    spend: (ms) => {
      spentMs += ms;
    },
    nextTurn: () =>
      // Two hops: an immediate queued during the poll phase (a QC worker resuming on a database answer) runs
      // right after that phase, before the loop has read the requests that arrived during the slice; the second,
      // queued from the check phase, runs only after the loop has polled again.
      (turn ??= setImmediate()
        .then(() => setImmediate())
        .then(() => {
          turn = undefined;
          spentMs = 0;
        })),
  };
}

/**
 * The slicer every rule evaluation of this process shares by default. Module-level on purpose: what it rations,
 * the event loop, is one per process, whichever skill, engine or worker an evaluation belongs to.
 */
export const processSlicer: EventLoopSlicer = createEventLoopSlicer();
