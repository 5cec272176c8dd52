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
  /** Import a REDCap CSV or CDISC ODM export, previewed before anything is written. */
  | { kind: 'import' }
  /** Who is on the trial, their role, and who sees identifier fields (admins manage; the trial's PI reads). */
  | { kind: 'members' }
  /** QC skills: the list, and one skill open in the editor (versions, validate, dry run, activate). */
  | { kind: 'skills'; skillId: string | null }
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
  | { name: 'trial'; projectId: string | null; page: TrialPage }
  /** The Protocol Agent; `conversationId` is null on `#/protocol`, which opens the most recent protocol. */
  | { name: 'protocol'; conversationId: string | null }
  /** The sample-size calculator, its inputs (and the card that opened it) in the query string. */
  | { name: 'protocolCalculator'; params: Record<string, string> }
  /** The dermatology consult; `sessionId` is null on `#/consult`, which opens the most recent consult. */
  | { name: 'consult'; sessionId: string | null };

function parseTrialPage(rest: string[]): TrialPage | null {
  const [kind, id] = rest;
  if (rest.length === 0 || (rest.length === 1 && kind === 'runs')) return { kind: 'runs' };
  if (rest.length === 1 && kind === 'queries') return { kind: 'queries' };
  if (rest.length === 1 && kind === 'review') return { kind: 'review' };
  if (rest.length === 1 && kind === 'assistant') return { kind: 'assistant' };
  if (rest.length === 1 && kind === 'memory') return { kind: 'memory' };
  if (rest.length === 1 && kind === 'reports') return { kind: 'reports' };
  if (rest.length === 1 && kind === 'import') return { kind: 'import' };
  if (rest.length === 1 && kind === 'members') return { kind: 'members' };
  if (rest.length === 1 && kind === 'skills') return { kind: 'skills', skillId: null };
  if (rest.length === 2 && id && kind === 'skills') return { kind: 'skills', skillId: id };
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

/** `?a=1&b=2` -> {a: '1', b: '2'}; URLSearchParams decodes, and a repeated key keeps its last value. */
function queryParams(query: string | undefined): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(query ?? ''));
}

function parseProtocolRoute(path: string): Route | null {
  const calculator = /^\/protocol\/calculator\/?(?:\?(.*))?$/.exec(path);
  if (calculator) return { name: 'protocolCalculator', params: queryParams(calculator[1]) };
  const protocol = /^\/protocol(?:\/([^/?]+))?\/?$/.exec(path);
  if (protocol) return { name: 'protocol', conversationId: protocol[1] ? decode(protocol[1]) : null };
  return null;
}

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const protocol = parseProtocolRoute(path);
  if (protocol) return protocol;
  const consult = /^\/consult(?:\/([^/?]+))?\/?$/.exec(path);
  if (consult) return { name: 'consult', sessionId: consult[1] ? decode(consult[1]) : null };
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
  trialImport: (projectId: string) => `${trialBase(projectId)}/import`,
  trialMembers: (projectId: string) => `${trialBase(projectId)}/members`,
  trialSkills: (projectId: string) => `${trialBase(projectId)}/skills`,
  trialSkill: (projectId: string, skillId: string) => `${trialBase(projectId)}/skills/${encodeURIComponent(skillId)}`,
  trace: (traceId: string) => `#/traces/${encodeURIComponent(traceId)}`,
  protocols: () => '#/protocol',
  protocol: (conversationId: string) => `#/protocol/${encodeURIComponent(conversationId)}`,
  protocolCalculator: (params: Record<string, string>) => {
    const query = new URLSearchParams(params).toString();
    return `#/protocol/calculator${query ? `?${query}` : ''}`;
  },
  consults: () => '#/consult',
  consult: (sessionId: string) => `#/consult/${encodeURIComponent(sessionId)}`,
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
  if (page.kind === 'import') return routes.trialImport(projectId);
  if (page.kind === 'members') return routes.trialMembers(projectId);
  if (page.kind === 'skills') return routes.trialSkills(projectId);
  return routes.trialRuns(projectId);
}

/**
 * An action card's deep link as a console link. The server builds it as a site path (`/protocol/calculator?...`)
 * so it reads the same in any client; the console routes by hash, so the path moves behind `#`. Links to other
 * sites are left as they are.
 */
export function consoleHref(actionUrl: string): string {
  if (actionUrl.startsWith('#')) return actionUrl;
  if (actionUrl.startsWith('/') && !actionUrl.startsWith('//') && !actionUrl.startsWith('/api/')) return `#${actionUrl}`;
  return actionUrl;
}

/**
 * A console route typed as a site path (`/protocol/calculator?design=...` in the URL bar): the server's SPA
 * fallback serves the console there, which then moves the path behind `#`. Null when there is nothing to move
 * (the root path, a hash already set, or a path that is no console page).
 */
export function hashForPathLink(location: Pick<Location, 'pathname' | 'search' | 'hash'>): string | null {
  if (location.hash || location.pathname === '/' || location.pathname === '') return null;
  const hash = `#${location.pathname}${location.search}`;
  return parseRoute(hash).name === 'scenarios' && !/^\/scenarios\/?$/.test(location.pathname) ? null : hash;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}
