import { isAllowedHost, nonPublicAddress, outboundHostProblem } from '../../core/net/public-address.js';

export interface DifyUrlPolicy {
  /** DIFY_ALLOW_HTTP=true: a Dify base URL may be plain http on any host it may name. */
  difyAllowHttp?: boolean;
  /** DIFY_ALLOWED_HOSTS: hosts a Dify base URL may name although they are loopback, private or link-local. */
  difyAllowedHosts?: ReadonlyArray<string>;
}

const ALLOW_BY_NAME = 'unless the server names the host in DIFY_ALLOWED_HOSTS (a Dify on this machine or your own network)';

/**
 * The app key travels in every request to a Dify base URL, and the server makes the request: so the URL must be
 * https, and its host a public one. A loopback, private or link-local host (169.254.169.254 serves cloud
 * credentials) is refused unless the administrator names it in DIFY_ALLOWED_HOSTS; the address a name resolves to
 * is checked again when the connection is made (dify-fetch.ts). Plain http is allowed to an allowed loopback host,
 * and anywhere when the administrator says so with DIFY_ALLOW_HTTP=true (a test Dify on a closed network).
 */
export function difyBaseUrlProblem(baseUrl: string, policy: DifyUrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `"${baseUrl}" is not a URL; give the app's API base URL, e.g. https://dify.example.org/v1`;
  }
  if (url.username || url.password) return 'must not carry a user name or password; the key is read from api_key_env';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an https URL, got ${url.protocol}`;
  const allowed = isAllowedHost(url.hostname, policy.difyAllowedHosts ?? []);
  const why = outboundHostProblem(url.hostname, policy.difyAllowedHosts ?? []);
  if (why) return `names ${url.hostname}, ${why}; a Dify base URL must be a public host ${ALLOW_BY_NAME}`;
  if (url.protocol === 'https:') return undefined;
  if ((allowed && isLoopback(url.hostname)) || policy.difyAllowHttp) return undefined;
  return 'must be https, so the app key never travels unencrypted; plain http is allowed only to a loopback host named in DIFY_ALLOWED_HOSTS, or anywhere when the server sets DIFY_ALLOW_HTTP=true (a test Dify on a closed network)';
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || nonPublicAddress(host) === nonPublicAddress('127.0.0.1') || host === '::1';
}
