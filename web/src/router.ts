import { useSyncExternalStore } from 'react';

/**
 * Hash routes keep the console a static bundle: the server's SPA fallback never sees client paths,
 * and links can be shared without server-side routing.
 */
export type Route =
  | { name: 'scenarios' }
  | { name: 'chat'; scenarioId: string }
  | { name: 'api' };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const chat = /^\/scenarios\/([^/?]+)\/?$/.exec(path);
  if (chat?.[1]) return { name: 'chat', scenarioId: decodeURIComponent(chat[1]) };
  if (path === '/api' || path === '/api/') return { name: 'api' };
  return { name: 'scenarios' };
}

export const routes = {
  scenarios: () => '#/scenarios',
  chat: (scenarioId: string) => `#/scenarios/${encodeURIComponent(scenarioId)}`,
  api: () => '#/api',
};

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}
