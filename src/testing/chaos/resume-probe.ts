/** A run a killed process held mid-node, with how many steps it had saved then. */
export interface StrandedRun {
  id: string;
  steps: number;
}

/** Where a run stands now: its saved steps and status. Missing from the map when it could not be read this time. */
export type ReadRuns = (ids: string[]) => Promise<Map<string, { steps: number; status: string }>>;

export interface Resume {
  kill: number;
  process: string;
  runId: string;
  killedAt: number;
  /** When the killed process was up again. */
  readyAt?: number;
  /** When the run's next step was seen committed (or its status left RUNNING/PENDING). */
  resumedAt?: number;
  /** Taken over by another process that was killed too before it committed: measured again from that kill. */
  superseded?: boolean;
}

const POLL_MS = 100;

/**
 * Measures, per kill, how long each run the killed process held took to move again: from the moment the process was
 * up again to the run's next committed step (0 when a surviving process took it over first). Polls the runs every
 * 100 ms, so a figure is accurate to about that.
 */
export function resumeProbe(readRuns: ReadRuns) {
  const resumes: Resume[] = [];
  const baseline = new Map<Resume, number>();
  let stopped = false;

  async function tick(): Promise<void> {
    const open = resumes.filter((r) => r.resumedAt === undefined && !r.superseded);
    if (!open.length) return;
    let now: Map<string, { steps: number; status: string }>;
    try {
      now = await readRuns([...new Set(open.map((r) => r.runId))]);
    } catch {
      return; // the database is restarting, or the server is down: read again next time
    }
    const at = Date.now();
    for (const resume of open) {
      const run = now.get(resume.runId);
      if (run && (run.steps > baseline.get(resume)! || (run.status !== 'RUNNING' && run.status !== 'PENDING'))) resume.resumedAt = at;
    }
  }

  const loop = (async () => {
    while (!stopped) {
      await tick();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();

  return {
    /** The runs `process` held when it was killed (kill number `kill`). */
    killed(kill: number, process: string, killedAt: number, runs: StrandedRun[]): void {
      for (const run of runs) {
        for (const earlier of resumes) if (earlier.runId === run.id && earlier.resumedAt === undefined) earlier.superseded = true;
        const resume: Resume = { kill, process, runId: run.id, killedAt };
        baseline.set(resume, run.steps);
        resumes.push(resume);
      }
    },
    /** The process killed as kill number `kill` is up again. */
    restarted(kill: number, readyAt: number): void {
      for (const resume of resumes) if (resume.kill === kill) resume.readyAt = readyAt;
    },
    pending: () => resumes.filter((r) => r.resumedAt === undefined && !r.superseded),
    resumes: () => resumes,
    async stop(): Promise<void> {
      stopped = true;
      await loop;
    },
  };
}

export type ResumeProbe = ReturnType<typeof resumeProbe>;

/** Time from the process being up again to the run's next step (0 if it moved before), in ms. */
export const resumeAfterRestart = (r: Resume): number => Math.max(0, r.resumedAt! - (r.readyAt ?? r.resumedAt!));
