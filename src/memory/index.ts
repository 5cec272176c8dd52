import { createFeedback } from './feedback/index.js';
import { createHotMemory } from './hot/index.js';
import { createProfiles } from './profiles/index.js';
import { createMemoryReports } from './reports/index.js';
import type { MemoryDeps, ProjectMemory } from './types.js';

export type * from './types.js';
export { registerMemoryWorkers } from './jobs.js';
export { PRUNE_DEFINITION } from './hot/prune-definition.js';
export { DISTILL_DEFINITION } from './hot/distill.js';
export { WEEKLY_REPORT_DEFINITION, YEARLY_SUMMARY_DEFINITION } from './reports/summarize.js';

/**
 * Project memory (seed 002) over the shared database: hot memory, weekly reports, answer feedback and user
 * profiles. The raw conversation log is agent/conversations; models never read it, only what is distilled here.
 */
export function createProjectMemory(deps: MemoryDeps): ProjectMemory {
  return { hot: createHotMemory(deps), reports: createMemoryReports(deps), feedback: createFeedback(deps), profiles: createProfiles(deps) };
}
