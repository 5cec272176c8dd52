import { outboundUrlProblem, type OutboundUrlWords } from '../../core/net/outbound-url.js';

export interface DifyUrlPolicy {
  /** DIFY_ALLOW_HTTP=true: a Dify base URL may be plain http on any host it may name. */
  difyAllowHttp?: boolean;
  /** DIFY_ALLOWED_HOSTS: hosts a Dify base URL may name although they are loopback, private or link-local. */
  difyAllowedHosts?: ReadonlyArray<string>;
}

const DIFY_WORDS: OutboundUrlWords = {
  what: 'a Dify base URL',
  example: "give the app's API base URL, e.g. https://dify.example.org/v1",
  secretSource: 'the key is read from api_key_env',
  secret: 'the app key',
  hostsSetting: 'DIFY_ALLOWED_HOSTS',
  httpSetting: 'DIFY_ALLOW_HTTP',
  localService: 'a Dify on this machine or your own network',
  closedNetwork: 'a test Dify on a closed network',
};

/**
 * The app key travels in every request to a Dify base URL: the one outbound URL policy (core/net/outbound-url.ts)
 * with Dify's settings; the address a name resolves to is checked again when the connection is made (dify-fetch.ts).
 */
export function difyBaseUrlProblem(baseUrl: string, policy: DifyUrlPolicy): string | undefined {
  return outboundUrlProblem(baseUrl, { allowHttp: policy.difyAllowHttp, allowedHosts: policy.difyAllowedHosts }, DIFY_WORDS);
}
