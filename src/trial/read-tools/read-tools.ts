import type { Db } from '../../core/db/connect.js';
import type { ToolDefinition } from '../../core/tools/registry.js';
import type { RagStore } from '../../rag/index.js';
import { openQueriesTool } from './open-queries.js';
import { projectStatsTool } from './project-stats.js';
import { readClinicalDataTool } from './read-clinical-data.js';
import { searchProtocolTool } from './search-protocol.js';
import { visitWindowTool } from './visit-window.js';

/** The only tools the trial assistant's ReAct loop may call (seed 000 section 5): none of them writes. */
export const TRIAL_READ_TOOL_NAMES = ['read_clinical_data', 'search_protocol', 'get_project_stats', 'check_visit_window', 'list_open_queries'] as const;

export interface TrialReadToolDeps {
  db: Db;
  rag: RagStore;
  hasVectorStore: boolean;
}

/**
 * The read-only tools bound to one project. Every query inside is filtered by `scope.projectId`, so a record
 * id of another project reads as one that does not exist, and no argument a model sends can widen the scope.
 * The caller checks that the acting user is a member before creating them (read-tool-service.ts does).
 * Identifier fields never leave these tools with a value: they are named as withheld instead.
 */
export function createTrialReadTools(deps: TrialReadToolDeps, scope: { projectId: string }): ToolDefinition<any>[] {
  const { projectId } = scope;
  const tools = [
    readClinicalDataTool(deps.db, projectId),
    searchProtocolTool(deps, projectId),
    projectStatsTool(deps.db, projectId),
    visitWindowTool(deps.db, projectId),
    openQueriesTool(deps.db, projectId),
  ];
  return tools as ToolDefinition<any>[];
}
