import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { isAllowedHost, nonPublicAddress } from '../../../core/net/public-address.js';

/**
 * The fetch the Dify client uses: the address a host name resolves to is checked when the connection is made, so a
 * name that resolved to a public address when the scenario was loaded and to 169.254.169.254 now (DNS rebinding)
 * is refused, as is one that always pointed inside. Hosts named in DIFY_ALLOWED_HOSTS connect wherever they resolve.
 * (An IP written in the URL is never looked up: the scenario's load check refuses a non-public one.)
 */
export function createDifyFetch(allowedHosts: ReadonlyArray<string>): typeof fetch {
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const usable = isAllowedHost(hostname, allowedHosts) ? addresses : addresses.filter((entry) => !nonPublicAddress(entry.address));
      if (!usable.length) {
        const found = addresses.map((entry) => entry.address).join(', ');
        const refused = Object.assign(new Error(`${hostname} resolves to ${found}, ${nonPublicAddress(addresses[0]!.address) ?? 'a non-public address'}; a Dify host must be public unless the server names it in DIFY_ALLOWED_HOSTS`), { code: 'EDIFYHOSTREFUSED' });
        return callback(refused, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
  const dispatcher = new Agent({ connect: { lookup } });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
}
