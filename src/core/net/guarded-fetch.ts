import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { isAllowedHost, nonPublicAddress } from './public-address.js';

export interface OutboundPolicy {
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
 * administrator named connect wherever they resolve. (An IP written in the URL is never looked up: the URL's own
 * check, outboundHostProblem, refuses a non-public one.)
 */
export function createGuardedFetch(policy: OutboundPolicy): typeof fetch {
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const usable = isAllowedHost(hostname, policy.allowedHosts) ? addresses : addresses.filter((entry) => !nonPublicAddress(entry.address));
      if (!usable.length) {
        const found = addresses.map((entry) => entry.address).join(', ');
        const refused = Object.assign(new Error(`${hostname} resolves to ${found}, ${nonPublicAddress(addresses[0]!.address) ?? 'a non-public address'}; ${policy.what} must be public unless the server names it in ${policy.setting}`), { code: policy.code });
        return callback(refused, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
  const dispatcher = new Agent({ connect: { lookup } });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
}
