/**
 * RAG documents are isolated by a scope: a scenario id, or `project:<id>` for a trial project's own documents
 * (its protocol, read by the trial assistant). Scenario ids allow no colon, so the two never meet. Project
 * documents are managed through the project's routes, where membership is checked; the generic RAG routes,
 * which any signed-in user may call, neither list nor change them.
 */
const PROJECT_SCOPE_PREFIX = 'project:';

export const projectScope = (projectId: string): string => `${PROJECT_SCOPE_PREFIX}${projectId}`;

export const isProjectScope = (scope: string): boolean => scope.startsWith(PROJECT_SCOPE_PREFIX);
