import { isAllowedHost, nonPublicAddress, outboundHostProblem } from './public-address.js';

/** What the administrator decided about URLs of one kind (Dify base URLs, MCP server URLs). */
export interface OutboundUrlPolicy {
  /** Plain http allowed on any host it may name (DIFY_ALLOW_HTTP, MCP_ALLOW_HTTP). */
  allowHttp?: boolean;
  /** Hosts it may name although they are loopback, private or link-local (DIFY_ALLOWED_HOSTS, MCP_ALLOWED_HOSTS). */
  allowedHosts?: ReadonlyArray<string>;
}

/** How the refusals of one kind of URL are worded, so each names its own settings and secret. */
export interface OutboundUrlWords {
  /** "a Dify base URL" */
  what: string;
  /** The refusal of a string that is not a URL, e.g. `give the app's API base URL, e.g. https://dify.example.org/v1`. */
  example: string;
  /** Where the secret comes from instead of the URL, e.g. "the key is read from api_key_env". */
  secretSource: string;
  /** The secret that travels with every request, e.g. "the app key". */
  secret: string;
  hostsSetting: string;
  httpSetting: string;
  /** The host an administrator would allow by name, e.g. "a Dify on this machine or your own network". */
  localService: string;
  /** Where plain http is fine, e.g. "a test Dify on a closed network". */
  closedNetwork: string;
}

/**
 * A secret travels in every request to a configured URL, and the server makes the request: so the URL must be
 * https, and its host a public one. A loopback, private or link-local host (169.254.169.254 serves cloud
 * credentials) is refused unless the administrator names it; the address a name resolves to is checked again when
 * the connection is made (guarded-fetch.ts). Plain http is allowed to an allowed loopback host, and anywhere when
 * the administrator says so (a test service on a closed network). One policy for every kind of configured URL.
 */
export function outboundUrlProblem(raw: string, policy: OutboundUrlPolicy, words: OutboundUrlWords): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not a URL; ${words.example}`;
  }
  if (url.username || url.password) return `must not carry a user name or password; ${words.secretSource}`;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an https URL, got ${url.protocol}`;
  const allowed = isAllowedHost(url.hostname, policy.allowedHosts ?? []);
  const why = outboundHostProblem(url.hostname, policy.allowedHosts ?? []);
  if (why) return `names ${url.hostname}, ${why}; ${words.what} must be a public host unless the server names the host in ${words.hostsSetting} (${words.localService})`;
  if (url.protocol === 'https:') return undefined;
  if ((allowed && isLoopback(url.hostname)) || policy.allowHttp) return undefined;
  return `must be https, so ${words.secret} never travels unencrypted; plain http is allowed only to a loopback host named in ${words.hostsSetting}, or anywhere when the server sets ${words.httpSetting}=true (${words.closedNetwork})`;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || nonPublicAddress(host) === nonPublicAddress('127.0.0.1') || host === '::1';
}
