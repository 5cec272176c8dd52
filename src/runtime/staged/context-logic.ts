import { LogicEngine } from 'json-logic-engine';
import { errorMessage } from '../../core/errors.js';

/**
 * Transition conditions and card triggers are plain JSON Logic over the context (`{">=": [{"var":
 * "sampleSize.total"}, 1]}`), with the library's standard operators only: they read what was collected, nothing
 * else. A condition that throws on odd data counts as not met (the stage waits), and the reason is returned for
 * the trace.
 */
const engine = new LogicEngine();

export function conditionHolds(condition: Record<string, unknown>, context: Record<string, unknown>): { holds: boolean; error?: string } {
  try {
    return { holds: Boolean(engine.run(condition, context)) };
  } catch (error) {
    return { holds: false, error: errorMessage(error) };
  }
}

/** Why a condition cannot be used, for the config validator; undefined when it compiles. */
export function conditionProblem(condition: unknown): string | undefined {
  try {
    engine.build(condition as Record<string, unknown>);
    return undefined;
  } catch (error) {
    return errorMessage(error);
  }
}
