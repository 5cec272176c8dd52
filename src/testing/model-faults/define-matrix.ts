import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLUMNS } from './faults.js';
import { startFaultServer, type FaultServer } from './fault-server.js';
import { renderMatrix } from './matrix.js';
import { runCell, type CellResult } from './run-cell.js';
import type { Engine, TargetSession } from './target.js';
import { FAULT_SKILLS, faultTargets } from './targets/index.js';

/** Small enough that one pending line takes the pruner's hot memory over the cap. */
const SUITE_ENV = { MEMORY_HOT_MAX_TOKENS: '285' };

/**
 * The model-fault suite (issue 31) on one engine: every agent of the platform against a model that misbehaves in
 * each known way, over real HTTP on one server over a test database. Every cell must end its turn within its
 * limits with a message meant for the person, no 5xx, no stuck conversation, a bounded number of model calls and
 * the agent's deterministic checks intact. The matrix (agents x faults) is printed at the end. One file per engine,
 * so the two run side by side.
 */
export function defineFaultMatrix(engine: Engine): void {
  const results: CellResult[] = [];
  let server: FaultServer;

  beforeAll(async () => {
    server = await startFaultServer(engine, { skills: FAULT_SKILLS, env: SUITE_ENV });
  });
  afterAll(async () => {
    // MODEL_FAULTS_EVERY_CELL=1 also lists what the person got in the green cells, to review them by eye.
    console.log(renderMatrix(results, COLUMNS, { everyCell: process.env.MODEL_FAULTS_EVERY_CELL === '1' }));
    await server?.close();
  });

  for (const target of faultTargets().filter((t) => t.engines.includes(engine))) {
    describe(target.id, () => {
      let session: TargetSession | undefined;
      let setUpError: unknown;
      beforeAll(async () => {
        try {
          session = await target.setUp(server);
        } catch (error) {
          // Reported by every cell of the row, so the rest of the matrix still runs.
          setUpError = error;
        }
      });

      for (const fault of COLUMNS) {
        it(`${fault.id}: ends the turn with a message for the person, no 5xx, not stuck, bounded calls, checks intact`, async () => {
          if (!session) {
            const problem = `the target could not be set up: ${setUpError instanceof Error ? setUpError.message : String(setUpError)}`;
            results.push({ target: target.id, fault: fault.id, engine, ok: false, problems: [problem], modelCalls: 0, ms: 0, shown: '' });
            expect.fail(problem);
          }
          const result = await runCell(server, target, session, fault);
          results.push(result);
          expect(result.problems, `${target.id} x ${fault.id}; the person got: "${result.shown}"`).toEqual([]);
        });
      }
    });
  }
}
