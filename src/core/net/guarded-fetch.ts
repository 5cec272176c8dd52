import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { isAllowedHost, nonPublicAddress } from './public-address.js';

interface OutboundPolicy {
  /** Hosts the administrator named (e.g. DIFY_ALLOWED_HOSTS): they connect wherever they resolve. */
  allowedHosts: ReadonlyArray<string>;
  /** What the host is, for the refusal: "a Dify host", "a REDCap host". */
  what: string;
  /** The setting that names allowed hosts, for the refusal. */
  setting: string;
  /** The error code of a refused connection, so callers and tests can tell it from a network failure. */
  code: string;
}

/**
 * A fetch for calls to a URL someone configured (a Dify app, a project's REDCap): the address a host name resolves
 * to is checked when the connection is made, so a name that resolved to a public address when the URL was saved
 * and to 169.254.169.254 now (DNS rebinding) is refused, as is one that always pointed inside. Hosts the
 * administrator named connect wherever they resolve. An IP written in a URL is never looked up, so it is checked
 * here too: the saved URL's own check (outboundHostProblem) never sees where a redirect leads, nor a URL saved before
 * that check existed.
 */
export function createGuardedFetch(policy: OutboundPolicy): typeof fetch {
  const refusal = (what: string) => Object.assign(new Error(`${what}; ${policy.what} must be public unless the server names it in ${policy.setting}`), { code: policy.code });
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const usable = isAllowedHost(hostname, policy.allowedHosts) ? addresses : addresses.filter((entry) => !nonPublicAddress(entry.address));
      if (!usable.length) {
        const found = addresses.map((entry) => entry.address).join(', ');
        return callback(refusal(`${hostname} resolves to ${found}, ${nonPublicAddress(addresses[0]!.address) ?? 'a non-public address'}`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
  const connector = buildConnector({ lookup });
  const connect: buildConnector.connector = (options, callback) => {
    // A host name gives undefined here; its addresses are checked by the lookup above.
    const problem = isAllowedHost(options.hostname, policy.allowedHosts) ? undefined : nonPublicAddress(options.hostname);
    if (problem) return callback(refusal(`${options.hostname} is ${problem}`), null);
    connector(options, callback);
  };
  const dispatcher = new Agent({ connect });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
}
