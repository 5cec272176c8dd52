import { BlockList, isIP } from 'node:net';

/**
 * Addresses no outbound call configured by a URL (a Dify app) may reach unless the administrator names the host:
 * the machine itself, the local networks, link-local (169.254.169.254 is where clouds serve instance credentials),
 * and the ranges reserved for documentation, benchmarks, multicast and the future. IANA special-purpose registries.
 */
const NON_PUBLIC: Array<[family: 'ipv4' | 'ipv6', network: string, prefix: number, what: string]> = [
  ['ipv4', '0.0.0.0', 8, 'a "this network" address'],
  ['ipv4', '10.0.0.0', 8, 'a private address'],
  ['ipv4', '100.64.0.0', 10, 'a carrier-grade NAT address'],
  ['ipv4', '127.0.0.0', 8, 'a loopback address'],
  ['ipv4', '169.254.0.0', 16, 'a link-local address (where clouds serve instance metadata and credentials)'],
  ['ipv4', '172.16.0.0', 12, 'a private address'],
  ['ipv4', '192.0.0.0', 24, 'a protocol-assignment address'],
  ['ipv4', '192.0.2.0', 24, 'a documentation address'],
  ['ipv4', '192.168.0.0', 16, 'a private address'],
  ['ipv4', '198.18.0.0', 15, 'a benchmarking address'],
  ['ipv4', '198.51.100.0', 24, 'a documentation address'],
  ['ipv4', '203.0.113.0', 24, 'a documentation address'],
  ['ipv4', '224.0.0.0', 4, 'a multicast address'],
  ['ipv4', '240.0.0.0', 4, 'a reserved address'],
  ['ipv6', '::', 128, 'the unspecified address'],
  ['ipv6', '::1', 128, 'a loopback address'],
  ['ipv6', '100::', 64, 'a discard address'],
  ['ipv6', '2001:db8::', 32, 'a documentation address'],
  ['ipv6', 'fc00::', 7, 'a private (unique local) address'],
  ['ipv6', 'fe80::', 10, 'a link-local address'],
  ['ipv6', 'ff00::', 8, 'a multicast address'],
];

const lists = NON_PUBLIC.map(([family, network, prefix, what]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { family, list, what };
});

/** The IPv4 address inside an IPv4-mapped or NAT64 IPv6 address (`::ffff:169.254.169.254`, `::ffff:a9fe:a9fe`). */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!match) return undefined;
  if (match[1]) return match[1];
  const high = parseInt(match[2]!, 16);
  const low = parseInt(match[3]!, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The compressed, lower-case spelling of an IPv6 address, as a URL writes it (`0:0:0:0:0:ffff:7f00:1` is
 * `::ffff:7f00:1`), so an embedded IPv4 address is found however the caller spelled it. Unchanged if the URL parser
 * refuses it (an address with a zone, `fe80::1%eth0`).
 */
function canonicalIpv6(address: string): string {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/** Why `address` (an IP, brackets allowed) is not a public internet address, or undefined when it is. */
export function nonPublicAddress(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return undefined;
  const v4 = family === 6 ? embeddedIpv4(canonicalIpv6(bare)) : bare;
  const [checked, kind] = v4 ? [v4, 'ipv4' as const] : [bare, 'ipv6' as const];
  return lists.find((entry) => entry.family === kind && entry.list.check(checked, kind))?.what;
}

/** Host names that are this machine or a local network by definition, whatever a resolver says. */
function nonPublicName(hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'this machine (localhost)';
  if (host.endsWith('.local') || host.endsWith('.internal') || host.endsWith('.lan') || host.endsWith('.home.arpa')) return 'a local-network name';
  return undefined;
}

/** Whether `hostname` is one the administrator allowed by name (case-insensitive, brackets and a final dot ignored). */
export function isAllowedHost(hostname: string, allowed: ReadonlyArray<string>): boolean {
  const normal = (name: string) => name.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const host = normal(hostname);
  return allowed.some((entry) => normal(entry) === host);
}

/**
 * Why a configured URL's host may not be called (loopback, a private or link-local address, a local-network name),
 * or undefined when it is public or the administrator allowed it by name. The address a public name resolves to is
 * checked again when connecting (guarded-fetch.ts).
 */
export function outboundHostProblem(hostname: string, allowed: ReadonlyArray<string>): string | undefined {
  if (isAllowedHost(hostname, allowed)) return undefined;
  return nonPublicAddress(hostname) ?? nonPublicName(hostname);
}
