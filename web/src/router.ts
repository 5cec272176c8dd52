import { useSyncExternalStore } from 'react';

/** The pages of the trial quality-control area; each belongs to one project. */
export type TrialPage =
  | { kind: 'runs' }
  | { kind: 'queries' }
  | { kind: 'review' }
  /** The trial assistant: ask about the project's data in plain language. */
  | { kind: 'assistant' }
  /** The project's hot memory: what the assistant always reads, with its versions. */
  | { kind: 'memory' }
  /** Weekly and yearly reports distilled from the project's conversations. */
  | { kind: 'reports' }
  | { kind: 'record'; recordId: string }
  | { kind: 'taskRun'; taskRunId: string };

/**
 * Hash routes keep the console a static bundle: the server's SPA fallback never sees client paths,
 * and links can be shared without server-side routing.
 */
export type Route =
  | { name: 'scenarios' }
  | { name: 'chat'; scenarioId: string }
  | { name: 'api' }
  /** The signed-in user's own tokens. */
  | { name: 'tokens' }
  /** Admins: users, roles, activation and everyone's tokens. */
  | { name: 'users' }
  /** One run's trace, readable step by step (admins; others get 404 from the server). */
  | { name: 'trace'; traceId: string }
  /** `projectId` is null on `#/trial`, which then opens the first project. */
  | { name: 'trial'; projectId: string | null; page: TrialPage };

function parseTrialPage(rest: string[]): TrialPage | null {
  const [kind, id] = rest;
  if (rest.length === 0 || (rest.length === 1 && kind === 'runs')) return { kind: 'runs' };
  if (rest.length === 1 && kind === 'queries') return { kind: 'queries' };
  if (rest.length === 1 && kind === 'review') return { kind: 'review' };
  if (rest.length === 1 && kind === 'assistant') return { kind: 'assistant' };
  if (rest.length === 1 && kind === 'memory') return { kind: 'memory' };
  if (rest.length === 1 && kind === 'reports') return { kind: 'reports' };
  if (rest.length === 2 && id && kind === 'records') return { kind: 'record', recordId: id };
  if (rest.length === 2 && id && kind === 'task-runs') return { kind: 'taskRun', taskRunId: id };
  return null;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    // A hand-edited hash with a stray '%': keep the text as typed rather than crash the console.
    return part;
  }
}

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const chat = /^\/scenarios\/([^/?]+)\/?$/.exec(path);
  if (chat?.[1]) return { name: 'chat', scenarioId: decode(chat[1]) };
  if (path === '/api' || path === '/api/') return { name: 'api' };
  if (path === '/account/tokens' || path === '/account/tokens/') return { name: 'tokens' };
  if (path === '/users' || path === '/users/') return { name: 'users' };
  const trace = /^\/traces\/([^/?]+)\/?$/.exec(path);
  if (trace?.[1]) return { name: 'trace', traceId: decode(trace[1]) };
  const trial = /^\/trial(?:\/(.*))?$/.exec(path);
  if (trial) {
    const parts = (trial[1] ?? '').split('/').filter(Boolean).map(decode);
    const [projectId, ...rest] = parts;
    if (!projectId) return { name: 'trial', projectId: null, page: { kind: 'runs' } };
    const page = parseTrialPage(rest);
    if (page) return { name: 'trial', projectId, page };
  }
  return { name: 'scenarios' };
}

const trialBase = (projectId: string) => `#/trial/${encodeURIComponent(projectId)}`;

export const routes = {
  scenarios: () => '#/scenarios',
  chat: (scenarioId: string) => `#/scenarios/${encodeURIComponent(scenarioId)}`,
  api: () => '#/api',
  tokens: () => '#/account/tokens',
  users: () => '#/users',
  trial: () => '#/trial',
  trialRuns: (projectId: string) => `${trialBase(projectId)}/runs`,
  trialQueries: (projectId: string) => `${trialBase(projectId)}/queries`,
  trialReview: (projectId: string) => `${trialBase(projectId)}/review`,
  trialAssistant: (projectId: string) => `${trialBase(projectId)}/assistant`,
  trialMemory: (projectId: string) => `${trialBase(projectId)}/memory`,
  trialReports: (projectId: string) => `${trialBase(projectId)}/reports`,
  trace: (traceId: string) => `#/traces/${encodeURIComponent(traceId)}`,
  trialRecord: (projectId: string, recordId: string) => `${trialBase(projectId)}/records/${encodeURIComponent(recordId)}`,
  taskRun: (projectId: string, taskRunId: string) => `${trialBase(projectId)}/task-runs/${encodeURIComponent(taskRunId)}`,
};

/** The same trial page in another project, for the project picker; detail pages fall back to the runs page. */
export function trialPageIn(projectId: string, page: TrialPage): string {
  if (page.kind === 'queries') return routes.trialQueries(projectId);
  if (page.kind === 'review') return routes.trialReview(projectId);
  if (page.kind === 'assistant') return routes.trialAssistant(projectId);
  if (page.kind === 'memory') return routes.trialMemory(projectId);
  if (page.kind === 'reports') return routes.trialReports(projectId);
  return routes.trialRuns(projectId);
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}
