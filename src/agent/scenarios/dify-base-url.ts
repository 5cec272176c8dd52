/**
 * The app key travels in every request to a Dify base URL, so it must be https. Plain http is allowed to a
 * loopback address (a Dify on the same machine, the test server) and, when the administrator says so with
 * DIFY_ALLOW_HTTP=true, anywhere (a test Dify on a closed network).
 */
export function difyBaseUrlProblem(baseUrl: string, policy: { difyAllowHttp?: boolean }): string | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `"${baseUrl}" is not a URL; give the app's API base URL, e.g. https://dify.example.org/v1`;
  }
  if (url.username || url.password) return 'must not carry a user name or password; the key is read from api_key_env';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `must be an https URL, got ${url.protocol}`;
  if (isLoopback(url.hostname) || policy.difyAllowHttp) return undefined;
  return 'must be https, so the app key never travels unencrypted; plain http is allowed only to a loopback host, or anywhere when the server sets DIFY_ALLOW_HTTP=true (a test Dify on a closed network)';
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
