import type { AgentResult } from '../../api';

type AgentFile = AgentResult['files'][number];

/**
 * Where a file a Dify app's tool made can be opened, and the name to show for it; null when it has no address
 * this page may link to. The server already drops every URL that is not http(s), but a link is the one place a
 * `javascript:` or `data:` URL becomes script in this page, so the page checks again rather than trust the wire.
 */
export function fileLink(file: AgentFile): { href: string; label: string } | null {
  let url: URL;
  try {
    url = new URL(file.url);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  return { href: url.href, label: decodeName(url.pathname.split('/').pop() ?? '') || file.id };
}

function decodeName(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
